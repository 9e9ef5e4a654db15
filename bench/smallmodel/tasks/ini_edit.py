"""Change a key in one section of an INI file, where another section has the same key."""

import configparser
from pathlib import Path

from bench.smallmodel.checks import read, write

STEPS = 2
ORIGINAL = (
    "[database]\nhost = db.internal\ntimeout = 30\npool = 5\n\n"
    "[cache]\nhost = cache.internal\ntimeout = 30\n"
)
FILES = {"app.ini": ORIGINAL}
PROMPTS = {
    "direct": "Set the database timeout to 45 in app.ini. Leave the cache settings alone.",
    "terse": "app.ini: database timeout 45, not cache",
    "indirect": (
        "The [cache] section of app.ini is right as it is. It's the database's timeout that's "
        "wrong: it should be 45."
    ),
}
EXPECTED = {
    "database": {"host": "db.internal", "timeout": "45", "pool": "5"},
    "cache": {"host": "cache.internal", "timeout": "30"},
}


def check(root: Path, answer: str) -> str | None:
    text = read(root, "app.ini")
    if text is None:
        return "app.ini missing"
    parser = configparser.ConfigParser()
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        return f"app.ini no longer parses: {exc}"
    got = {name: dict(parser[name]) for name in parser.sections()}
    return None if got == EXPECTED else f"app.ini holds {got}"


def solve(root: Path) -> str:
    write(root, "app.ini", ORIGINAL.replace("timeout = 30\npool", "timeout = 45\npool"))
    return "Set."
