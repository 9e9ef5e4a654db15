"""Read a value from an INI config: the answer must hold the real (unusual) port."""

from pathlib import Path

from bench.smallmodel.checks import mentions_number, unchanged
from bench.smallmodel.forms import AnswerLine

STEPS = 1
PROMPTS = {
    "direct": "What port does the web server listen on, according to this project's configuration?",
    "terse": "web server port? answer with a line ANSWER: <port>",
    "indirect": (
        "The metrics port is not what I'm after. I want the port the web server itself listens "
        "on, from the configuration."
    ),
    "other": (
        "Sur quel port le serveur web écoute-t-il, d'après la configuration du projet ? Réponds "
        "avec une ligne de la forme : ANSWER: <port>"
    ),
}
FORMS = {"terse": AnswerLine(), "other": AnswerLine()}
VALUE = "8437"
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
