"""Rename a function and its uses within one file."""

import re
from pathlib import Path

from bench.smallmodel.checks import read, run_python, unchanged, write

STEPS = 2
ORIGINAL = '''"""Cache helpers."""


def calc_ttl(hits, base=60):
    """Seconds an entry lives: longer for popular entries."""
    return base * (1 + min(hits, 9))


def describe(hits):
    return f"ttl={calc_ttl(hits)}s"


def longest(entries):
    return max(calc_ttl(h) for h in entries)
'''
FILES = {"cache_utils.py": ORIGINAL}
PROMPTS = {
    "direct": (
        "In cache_utils.py, rename the function calc_ttl to compute_ttl, and update its uses."
    ),
    "terse": "calc_ttl -> compute_ttl in cache_utils.py, uses too",
    "indirect": (
        "calc_ttl is a bad name. In cache_utils.py the function and every call of it should say "
        "compute_ttl instead."
    ),
    "other": (
        "En cache_utils.py, cambia el nombre de la función calc_ttl a compute_ttl y actualiza "
        "sus usos."
    ),
}
PROBE = (
    "import cache_utils as c; assert c.compute_ttl(2) == 180; "
    "assert c.describe(0) == 'ttl=60s'; assert c.longest([1, 20]) == 600; "
    "assert not hasattr(c, 'calc_ttl')"
)


def check(root: Path, answer: str) -> str | None:
    text = read(root, "cache_utils.py")
    if text is None:
        return "cache_utils.py missing"
    if re.search(r"\bcalc_ttl\b", text):
        return "calc_ttl still there"
    if (why := unchanged(root, FILES, skip=("cache_utils.py",))) is not None:
        return why
    done = run_python(root, "-c", PROBE)
    return None if done.returncode == 0 else "probe failed: " + done.stderr[-200:]


def solve(root: Path) -> str:
    write(root, "cache_utils.py", ORIGINAL.replace("calc_ttl", "compute_ttl"))
    return "Renamed."
