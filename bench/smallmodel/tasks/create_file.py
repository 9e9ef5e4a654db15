"""Create a file with given content."""

from pathlib import Path

from bench.smallmodel.checks import read, unchanged, write

STEPS = 1
LINE = "Release 4.2 ships on Friday the 13th."
PROMPTS = {
    "direct": f"Create a file named NOTES.md that contains exactly this one line: {LINE}",
    "terse": "new file NOTES.md, one line: Release 4.2 ships on Friday the 13th.",
    "indirect": (
        "README.md stays as it is. What's missing is a NOTES.md whose only line is: Release 4.2 "
        "ships on Friday the 13th."
    ),
    "other": (
        "Lege eine Datei NOTES.md an, die genau diese eine Zeile enthält: Release 4.2 ships on "
        "Friday the 13th."
    ),
}
KEEP = {"indirect": ('README.md',)}
FILES = {"README.md": "# Harbor\n\nA tiny release tracker.\n"}


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES)) is not None:
        return why
    text = read(root, "NOTES.md")
    if text is None:
        return "NOTES.md missing"
    return None if text.strip() == LINE else f"NOTES.md holds {text[:80]!r}"


def solve(root: Path) -> str:
    write(root, "NOTES.md", LINE + "\n")
    return "Created NOTES.md."
