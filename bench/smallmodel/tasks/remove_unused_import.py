"""Remove an unused import: "remove" asks for an edit of main.py, not for its deletion."""

import re
from pathlib import Path

from bench.smallmodel.checks import read, run_python, unchanged, write

STEPS = 2
ORIGINAL = (
    "import os\nimport sys\n\n\ndef main(argv):\n"
    "    print(' '.join(argv[1:]) or 'nothing to say')\n\n\n"
    "if __name__ == '__main__':\n    main(sys.argv)\n"
)
FILES = {"main.py": ORIGINAL, "README.md": "# Echo\n\n`python main.py WORDS` says them back.\n"}
PROMPTS = {
    "direct": "Remove main.py's unused import.",
    "terse": "drop unused import in main.py",
    "indirect": "Nothing in main.py uses os, so that import has no business being there.",
    "other": "Entferne den ungenutzten Import aus main.py.",
}
USES_OS = re.compile(r"^\s*(import\s+os\b|from\s+os\b)", re.MULTILINE)


def _kept(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES, skip=("main.py",))) is not None:
        return why
    text = read(root, "main.py")
    if text is None:
        return "main.py was removed"
    if USES_OS.search(text):
        return "main.py still imports os"
    if _kept(text) != _kept(ORIGINAL.replace("import os\n", "")):
        return "main.py changed beyond the import"
    done = run_python(root, "main.py", "hi", "there")
    return None if done.stdout.strip() == "hi there" else "main.py: " + done.stderr[-200:]


def solve(root: Path) -> str:
    write(root, "main.py", ORIGINAL.replace("import os\n", ""))
    return "Removed import os."
