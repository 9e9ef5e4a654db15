"""Read a value from an INI config: the answer must hold the real (unusual) port."""

from pathlib import Path

from bench.smallmodel.checks import mentions_number, unchanged

STEPS = 1
PROMPT = "What port does the web server listen on, according to this project's configuration?"
FILES = {
    "config/server.ini": (
        "[server]\nhost = 0.0.0.0\nport = 8437\nworkers = 3\n\n"
        "[metrics]\nport = 9102\nenabled = true\n"
    ),
    "app.py": "from configparser import ConfigParser\n\n"
    "cfg = ConfigParser()\ncfg.read('config/server.ini')\n",
}


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES)) is not None:
        return why
    return None if mentions_number(answer, 8437) else "answer lacks 8437"


def solve(root: Path) -> str:
    return "It listens on port 8437."
