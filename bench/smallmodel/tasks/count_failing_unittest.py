"""Run a unittest suite (not pytest) and report how many tests fail (seven of nineteen)."""

from pathlib import Path

from bench.smallmodel.checks import mentions_number, unchanged
from bench.smallmodel.forms import AnswerLine

STEPS = 2
INVENTORY = (
    "def restock(stock, item, qty):\n    stock[item] = stock.get(item, 0) + qty\n"
    "    return stock\n"
)
_PASSING = "".join(
    f"    def test_restock_{i}(self):\n"
    f"        self.assertEqual(restock({{}}, 'bolt', {i})['bolt'], {i})\n\n"
    for i in range(12)
)
_FAILING = "".join(
    f"    def test_restock_twice_{i}(self):\n"
    f"        self.assertEqual(restock({{'nut': {i}}}, 'nut', {i})['nut'], {3 * i + 1})\n\n"
    for i in range(7)
)
FILES = {
    "inventory.py": INVENTORY,
    "test_inventory.py": (
        "import unittest\n\nfrom inventory import restock\n\n\n"
        "class RestockTest(unittest.TestCase):\n" + _PASSING + _FAILING
        + "\nif __name__ == '__main__':\n    unittest.main()\n"
    ),
}
PROMPTS = {
    "direct": (
        "Run the command: python -m unittest, and tell me how many tests fail. Do not modify "
        "any files."
    ),
    "terse": "how many unittest failures? dont fix anything",
    "indirect": (
        "I'm not asking you to fix anything in inventory.py or test_inventory.py; I only want "
        "to know how many of the tests fail right now. Reply with a line in the form: "
        "ANSWER: <number>"
    ),
    "other": (
        "Lance les tests de ce projet et dis-moi combien échouent. Réponds avec une ligne de la "
        "forme : ANSWER: <nombre>"
    ),
}
FORMS = {"indirect": AnswerLine(), "other": AnswerLine()}
KEEP = {"indirect": ("inventory.py", "test_inventory.py")}
VALUE = "7"
ALIASES = ("seven",)


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES)) is not None:
        return why
    if not mentions_number(answer, 7, words=("seven",), near="fail"):
        return "answer lacks 7 failing"
    return None


def solve(root: Path) -> str:
    return "7 tests fail (12 pass): FAILED (failures=7)."
