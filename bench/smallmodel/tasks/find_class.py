"""Find the file that defines a class (it is imported in several others)."""

from pathlib import Path

from bench.smallmodel.checks import unchanged
from bench.smallmodel.forms import AnswerLine

STEPS = 2
FILES = {
    "src/finance/__init__.py": "",
    "src/finance/reconcile/__init__.py": "from .engine import LedgerReconciler\n",
    "src/finance/reconcile/engine.py": (
        "class LedgerReconciler:\n    def __init__(self, ledger):\n        self.ledger = ledger\n"
    ),
    "src/finance/cli.py": "from finance.reconcile import LedgerReconciler\n",
    "src/finance/reports/monthly.py": "from finance.reconcile import LedgerReconciler\n",
    "docs/notes.md": "The LedgerReconciler matches entries.\n",
}
PROMPTS = {
    "direct": "Which file defines the LedgerReconciler class?",
    "terse": "where's LedgerReconciler defined",
    "indirect": (
        "LedgerReconciler is imported in cli.py and reports/monthly.py, but neither defines it. "
        "I need the path of the file that does, from the project root, on a line in the form: "
        "ANSWER: <path>"
    ),
    "other": "In welcher Datei ist die Klasse LedgerReconciler definiert?",
}
FORMS = {"indirect": AnswerLine()}
VALUE = "src/finance/reconcile/engine.py"


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES)) is not None:
        return why
    if "reconcile/engine.py" not in answer.replace("\\", "/"):
        return "answer does not name reconcile/engine.py"
    return None


def solve(root: Path) -> str:
    return "src/finance/reconcile/engine.py"
