"""Read the right one of two alike keys in a JSON file."""

from pathlib import Path

from bench.smallmodel.checks import mentions_number, unchanged
from bench.smallmodel.forms import JsonField

STEPS = 1
PROMPTS = {
    "direct": "How many times does the uploader retry before it gives up?",
    "terse": "uploader retries before giving up?",
    "indirect": (
        "Not the downloader, the uploader: how many retries does it get before it gives up? "
        'Reply with only a JSON object like {"retries": <n>}.'
    ),
}
FORMS = {"indirect": JsonField("retries")}
VALUE = "17"
ALIASES = ('seventeen',)
FILES = {
    "settings.json": (
        '{\n  "downloader": {"max_retries": 4, "timeout_s": 30},\n'
        '  "uploader": {"max_retries": 17, "timeout_s": 45},\n  "log_level": "info"\n}\n'
    ),
    "uploader.py": "import json\n\nSETTINGS = json.load(open('settings.json'))['uploader']\n",
}


def check(root: Path, answer: str) -> str | None:
    if (why := unchanged(root, FILES)) is not None:
        return why
    if not mentions_number(answer, 17, words=("seventeen",)):
        return "answer lacks 17"
    return "answer also names the downloader's 4" if mentions_number(answer, 4) else None


def solve(root: Path) -> str:
    return "The uploader retries 17 times."
