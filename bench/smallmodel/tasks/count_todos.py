"""Count TODO comments in one folder (another folder has a decoy)."""

from pathlib import Path

from bench.smallmodel.checks import mentions_number, unchanged
from bench.smallmodel.forms import JsonField

STEPS = 2
FILES = {
    "src/a.py": "# TODO: cache this\nx = 1\n# TODO: name it better\n",
    "src/b.py": "def f():\n    pass  # TODO: implement\n",
    "src/sub/c.py": "# TODO: tests\n# TODO: docs\ny = 2\n# TODO: remove\n",
    "docs/plan.md": "TODO: write the plan\nTODO: review\n",
}
PROMPTS = {
    "direct": "How many TODO comments are there in the src folder?",
    "terse": 'todos in src/ only? reply json {"todos": n}',
    "indirect": (
        "The docs folder has TODOs too, but those don't count: I only want the number of TODO "
        "comments under src/."
    ),
}
FORMS = {"terse": JsonField("todos")}
VALUE = "6"
ALIASES = ('six',)


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES)) is not None:
        return why
    return None if mentions_number(answer, 6, words=("six",), near="todo") else "answer lacks 6"


def solve(root: Path) -> str:
    return "There are 6 TODO comments in src."
