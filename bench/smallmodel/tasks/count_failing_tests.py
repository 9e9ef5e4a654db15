"""Run the tests and report how many fail (five of thirteen)."""

from pathlib import Path

from bench.smallmodel.checks import mentions_number, unchanged
from bench.smallmodel.forms import AnswerLine

STEPS = 2
_PASSING = "".join(f"def test_ok_{i}():\n    assert {i} + 1 == {i + 1}\n\n\n" for i in range(8))
_FAILING = "".join(
    f"def test_bad_{i}():\n    assert {i} * 2 == {i * 2 + 1}\n\n\n" for i in range(5)
)
FILES = {
    "tests/test_arith.py": _PASSING + _FAILING,
    "arith.py": "def add(a, b):\n    return a + b\n",
}
PROMPTS = {
    "direct": "Run this project's tests and tell me how many of them fail.",
    "terse": "how many tests fail",
    "indirect": (
        "I'd like to know the number of failing tests in this project: not fixed, just counted, "
        "with nothing modified. Reply with a line in the form: ANSWER: <number>"
    ),
    "other": (
        "Ejecuta las pruebas de este proyecto y dime cuántas fallan. Responde con una línea de "
        "la forma: ANSWER: <número>"
    ),
}
FORMS = {"indirect": AnswerLine(), "other": AnswerLine()}
VALUE = "5"
ALIASES = ('five',)


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES)) is not None:
        return why
    if not mentions_number(answer, 5, words=("five",), near="fail"):
        return "answer lacks 5 failing"
    return None


def solve(root: Path) -> str:
    return "5 tests fail (8 pass)."
