"""Read a value from a TOML file, where another table has a key of the same name."""

from pathlib import Path

from bench.smallmodel.checks import mentions_number, unchanged
from bench.smallmodel.forms import AnswerLine, OnlyValue

STEPS = 1
PROMPTS = {
    "direct": (
        "What is the database connection pool size set to in deploy.toml? Reply with a line in "
        "the form: ANSWER: <value>"
    ),
    "terse": "db pool size?",
    "indirect": (
        "The cache pool is not the one I mean. What pool size do the database connections use?"
    ),
    "other": (
        "Wie groß ist der Verbindungspool der Datenbank laut deploy.toml? Antworte nur mit der "
        "Zahl, ohne weiteren Text."
    ),
}
FORMS = {"direct": AnswerLine(), "other": OnlyValue()}
VALUE = "61"
FILES = {
    "deploy.toml": (
        '[app]\nname = "ledgerline"\nworkers = 4\n\n'
        '[database]\nurl = "postgres://db.internal/ledger"\npool_size = 61\ntimeout_s = 15\n\n'
        "[cache]\npool_size = 8\nttl_s = 300\n"
    ),
    "main.py": (
        "import tomllib\n\nwith open('deploy.toml', 'rb') as f:\n    CONFIG = tomllib.load(f)\n"
    ),
}


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES)) is not None:
        return why
    if not mentions_number(answer, 61):
        return "answer lacks 61"
    return "answer also names the cache's 8" if mentions_number(answer, 8) else None


def solve(root: Path) -> str:
    return "The database pool size is 61 (pool_size in [database])."
