"""Run the tests and report how many fail (five of thirteen)."""

from pathlib import Path

from bench.smallmodel.checks import mentions_number, unchanged

STEPS = 2
_PASSING = "".join(f"def test_ok_{i}():\n    assert {i} + 1 == {i + 1}\n\n\n" for i in range(8))
_FAILING = "".join(
    f"def test_bad_{i}():\n    assert {i} * 2 == {i * 2 + 1}\n\n\n" for i in range(5)
)
FILES = {
    "tests/test_arith.py": _PASSING + _FAILING,
    "arith.py": "def add(a, b):\n    return a + b\n",
}
PROMPT = "Run this project's tests and tell me how many of them fail."


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES)) is not None:
        return why
    if not mentions_number(answer, 5, words=("five",), near="fail"):
        return "answer lacks 5 failing"
    return None


def solve(root: Path) -> str:
    return "5 tests fail (8 pass)."
