"""Change a constant the prompt does not locate (one search, one edit)."""

from pathlib import Path

from bench.smallmodel.checks import run_python, unchanged

STEPS = 3
FILES = {
    "uploads/__init__.py": "",
    "uploads/limits.py": "MAX_UPLOAD_MB = 25\nMAX_FILES = 10\nCHUNK_KB = 512\n",
    "uploads/handler.py": "from uploads.limits import MAX_UPLOAD_MB\n\n\n"
    "def too_big(size_mb):\n    return size_mb > MAX_UPLOAD_MB\n",
    "README.md": "# Drop\n\nA file drop service.\n",
}
PROMPTS = {
    "direct": "Raise the maximum upload size from 25 MB to 100 MB.",
    "terse": "upload limit 25mb -> 100mb",
    "indirect": (
        "Users can't upload files over 25 MB; they should be able to upload up to 100 MB. "
        "README.md is fine as it is."
    ),
}
KEEP = {"indirect": ('README.md',)}
PROBE = (
    "from uploads import limits; from uploads.handler import too_big; "
    "assert limits.MAX_UPLOAD_MB == 100 and limits.MAX_FILES == 10 and limits.CHUNK_KB == 512; "
    "assert not too_big(99) and too_big(101)"
)


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES, skip=("uploads/limits.py",))) is not None:
        return why
    done = run_python(root, "-c", PROBE)
    return None if done.returncode == 0 else "probe failed: " + done.stderr[-200:]


def solve(root: Path) -> str:
    path = root / "uploads/limits.py"
    path.write_text(path.read_text().replace("= 25", "= 100"))
    return "Set MAX_UPLOAD_MB = 100."
