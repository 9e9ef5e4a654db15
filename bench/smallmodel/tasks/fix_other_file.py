"""A wrong greeting whose text lives in another file than the one named."""

from pathlib import Path

from bench.smallmodel.checks import run_python, unchanged

STEPS = 3
FILES = {
    "app.py": "from messages import GREETING\n\nprint(GREETING.format(name='world'))\n",
    "messages.py": "GREETING = 'Helo, {name}!'\nFAREWELL = 'Goodbye, {name}.'\n",
}
PROMPTS = {
    "direct": "python app.py prints 'Helo, world!' - fix the spelling so it says 'Hello, world!'.",
    "terse": "app.py says Helo, world! should be Hello, world!",
    "indirect": (
        "app.py is fine, leave it alone. But the greeting it prints is misspelt: 'Helo, world!' "
        "where it should be 'Hello, world!'."
    ),
}
KEEP = {"indirect": ('app.py',)}


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES, skip=("messages.py", "app.py"))) is not None:
        return why
    done = run_python(root, "app.py")
    if done.stdout.strip() != "Hello, world!":
        return f"app.py prints {done.stdout.strip()!r}"
    probe = "from messages import FAREWELL; assert FAREWELL == 'Goodbye, {name}.'"
    return None if run_python(root, "-c", probe).returncode == 0 else "FAREWELL broken"


def solve(root: Path) -> str:
    path = root / "messages.py"
    path.write_text(path.read_text().replace("Helo", "Hello"))
    return "Fixed in messages.py."
