"""Find a value defined in code somewhere in a small tree."""

from pathlib import Path

from bench.smallmodel.checks import mentions_number, unchanged
from bench.smallmodel.forms import OnlyValue

STEPS = 2
FILES = {
    "api/__init__.py": "",
    "api/routes.py": "from api.pagination import paginate\n\n\n"
    "def list_users(db):\n    return paginate(db.users())\n",
    "api/pagination.py": "DEFAULT_PAGE_SIZE = 73\nMAX_PAGE_SIZE = 500\n\n\n"
    "def paginate(rows, size=DEFAULT_PAGE_SIZE):\n    return rows[:size]\n",
    "README.md": "# Roster API\n\nLists users, page by page.\n",
}
PROMPTS = {
    "direct": "How many items does the API return per page by default?",
    "terse": "default page size of the api?",
    "indirect": (
        "Without a size given, the API returns some number of items per page. I need that "
        "number; reply with just the number, nothing else."
    ),
    "other": "¿Cuántos elementos devuelve la API por página por defecto?",
}
FORMS = {"indirect": OnlyValue()}
VALUE = "73"


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES)) is not None:
        return why
    return None if mentions_number(answer, 73) else "answer lacks 73"


def solve(root: Path) -> str:
    return "73 (DEFAULT_PAGE_SIZE in api/pagination.py)."
