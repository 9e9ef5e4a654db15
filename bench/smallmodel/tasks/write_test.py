"""Write tests that pass on the real code and catch a broken copy of it."""

from pathlib import Path

from bench.smallmodel.checks import read, run_python, unchanged, write

STEPS = 3
STACK = (
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n"
    "    def push(self, item):\n        self.items.append(item)\n\n"
    "    def pop(self):\n        return self.items.pop()\n\n"
    "    def __len__(self):\n        return len(self.items)\n"
)
FILES = {"stack.py": STACK}
PROMPTS = {
    "direct": (
        "Write a pytest test file tests/test_stack.py for the Stack class in stack.py. "
        "It should check that pop returns the most recently pushed item."
    ),
    "terse": "pytest tests in tests/test_stack.py for Stack (stack.py): pop gives the last pushed",
    "indirect": (
        "stack.py has no tests yet. Don't change stack.py; tests/test_stack.py should show that "
        "pop returns the item pushed last."
    ),
}
KEEP = {"indirect": ('stack.py',)}
PYTEST = ("-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", ".", "tests/test_stack.py")


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES)) is not None:
        return why
    if read(root, "tests/test_stack.py") is None:
        return "tests/test_stack.py missing"
    try:
        if run_python(root, *PYTEST).returncode != 0:
            return "the tests fail on the real Stack"
        (root / "stack.py").write_text(STACK.replace("self.items.pop()", "self.items.pop(0)"))
        if run_python(root, *PYTEST).returncode == 0:
            return "the tests pass on a Stack that pops the oldest item"
        return None
    finally:
        (root / "stack.py").write_text(STACK)


def solve(root: Path) -> str:
    write(root, "tests/test_stack.py", (
        "from stack import Stack\n\n\ndef test_pop_last():\n    s = Stack()\n"
        "    s.push(1)\n    s.push(2)\n    assert s.pop() == 2\n"
    ))
    return "Wrote tests/test_stack.py."
