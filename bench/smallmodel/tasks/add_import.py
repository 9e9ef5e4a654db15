"""A NameError from a missing import: fix it."""

from pathlib import Path

from bench.smallmodel.checks import run_python, write

STEPS = 2
ORIGINAL = (
    "def summary(rows):\n    return json.dumps({'count': len(rows), 'first': rows[0]})\n\n\n"
    "if __name__ == '__main__':\n    print(summary(['a', 'b']))\n"
)
FILES = {"report.py": ORIGINAL}
PROMPTS = {
    "direct": "Running python report.py fails with NameError: name 'json' is not defined. Fix it.",
    "terse": "python report.py -> NameError: name 'json' is not defined. fix pls",
    "indirect": (
        "I get NameError: name 'json' is not defined from report.py; the module it uses was "
        "never imported."
    ),
}


def check(root: Path, answer: str) -> str | None:
    done = run_python(root, "report.py")
    if done.returncode != 0:
        return "report.py still fails: " + done.stderr[-200:]
    return None if done.stdout.strip() == '{"count": 2, "first": "a"}' else "wrong output"


def solve(root: Path) -> str:
    write(root, "report.py", "import json\n\n\n" + ORIGINAL)
    return "Added import json."
