"""Say what the project does (the names do not give it away; the code does)."""

from pathlib import Path

from bench.smallmodel.checks import unchanged

STEPS = 2
FILES = {
    "glyphs/__init__.py": "",
    "glyphs/convert.py": (
        "PAIRS = [(1000, 'M'), (900, 'CM'), (500, 'D'), (400, 'CD'), (100, 'C'), (90, 'XC'),\n"
        "         (50, 'L'), (40, 'XL'), (10, 'X'), (9, 'IX'), (5, 'V'), (4, 'IV'), (1, 'I')]\n\n\n"
        "def to_roman(n):\n    out = ''\n    for value, letters in PAIRS:\n"
        "        while n >= value:\n            out += letters\n            n -= value\n"
        "    return out\n"
    ),
    "glyphs/__main__.py": "import sys\n\nfrom glyphs.convert import to_roman\n\n"
    "print(to_roman(int(sys.argv[1])))\n",
}
PROMPTS = {
    "direct": "What does this project do? Answer in one or two sentences.",
    "terse": "what does this do",
    "indirect": (
        "There's no README here, so I can't tell what this project is for. Explain it to me in "
        "a sentence or two."
    ),
}


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES)) is not None:
        return why
    return None if "roman" in answer.lower() else "answer does not mention Roman numerals"


def solve(root: Path) -> str:
    return "It converts integers to Roman numerals from the command line."
