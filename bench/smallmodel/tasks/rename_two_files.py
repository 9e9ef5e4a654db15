"""Rename a function whose call site is in another file."""

import re
from pathlib import Path

from bench.smallmodel.checks import read, run_python, write

STEPS = 3
FILES = {
    "shapes.py": "def area_of(width, height):\n    return width * height\n",
    "main.py": (
        "from shapes import area_of\n\n\n"
        "def report(w, h):\n    return f'{w}x{h} -> {area_of(w, h)}'\n\n\n"
        "if __name__ == '__main__':\n    print(report(7, 6))\n"
    ),
}
PROMPTS = {
    "direct": "Rename the function area_of to rectangle_area everywhere in this project.",
    "terse": "s/area_of/rectangle_area/ everywhere pls",
    "indirect": (
        "area_of isn't a good name for what it does; it should be rectangle_area, in shapes.py "
        "and wherever it's called."
    ),
}


def check(root: Path, answer: str) -> str | None:
    for path in FILES:
        text = read(root, path)
        if text is None:
            return f"{path} missing"
        if re.search(r"\barea_of\b", text):
            return f"area_of still in {path}"
    if "def rectangle_area" not in (read(root, "shapes.py") or ""):
        return "shapes.py does not define rectangle_area"
    done = run_python(root, "main.py")
    return None if done.stdout.strip() == "7x6 -> 42" else "main.py: " + done.stderr[-200:]


def solve(root: Path) -> str:
    for path, text in FILES.items():
        write(root, path, text.replace("area_of", "rectangle_area"))
    return "Renamed in shapes.py and main.py."
