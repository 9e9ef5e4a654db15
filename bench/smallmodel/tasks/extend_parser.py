"""A harder one: extend a parser with a new unit and keep the old ones working."""

from pathlib import Path

from bench.smallmodel.checks import run_python, write

STEPS = 3
ORIGINAL = '''def parse_duration(text):
    """Seconds in a duration like '90s' or '5m'."""
    number, unit = int(text[:-1]), text[-1]
    if unit == "s":
        return number
    if unit == "m":
        return number * 60
    raise ValueError(f"unknown unit in {text!r}")
'''
FILES = {"timeparse.py": ORIGINAL}
PROMPTS = {
    "direct": (
        "parse_duration in timeparse.py should also accept hours, like '2h' (7200 seconds). "
        "Add that; seconds and minutes must keep working."
    ),
    "terse": "timeparse.parse_duration: support hours too ('2h' = 7200), keep s and m",
    "indirect": (
        "parse_duration('2h') raises ValueError right now, but it ought to return 7200. '90s' "
        "and '5m' work and must go on working."
    ),
}
PROBE = (
    "from timeparse import parse_duration as p; "
    "assert p('2h') == 7200 and p('1h') == 3600 and p('90s') == 90 and p('5m') == 300\n"
    "try:\n    p('3d')\nexcept ValueError:\n    pass\nelse:\n    raise SystemExit('3d accepted')"
)


def check(root: Path, answer: str) -> str | None:
    done = run_python(root, "-c", PROBE)
    return None if done.returncode == 0 else "probe failed: " + (done.stderr or done.stdout)[-200:]


def solve(root: Path) -> str:
    hours = '    if unit == "h":\n        return number * 3600\n    raise'
    write(root, "timeparse.py", ORIGINAL.replace("    raise", hours))
    return "Added hours."
