"""What a request asks for: a change in the project, a command run, or an answer to a
question. Small models are helped differently for each (run/answer_check.py,
run/read_ahead.py, run/request_state.py); this module depends on none of them.
"""

from __future__ import annotations

import re  # patterns compiled on first use (re caches them), not at start-up
from typing import Literal

__all__ = ["asked_action", "asks_change", "changes_nothing", "is_question"]

_CHANGE_VERBS = (
    r"\b(?:add|append|insert|fix|correct|create|make|write|delete|remove|rename|move|change|"
    r"set|bump|raise|lower|increase|decrease|update|replace|edit|modify|implement|refactor)\b"
)
_RUN_VERBS = r"\b(?:run|execute|install|build)\b"
_QUESTION_START = r"^\s*(?:how|what|which|where|who|why|when|is|are|does|do|can|could)\b"


def asks_change(request: str) -> bool:
    """Whether a request asks for a change in the project or a command run (not a question
    about the project)."""
    return asked_action(request) is not None


def is_question(request: str) -> bool:
    """Whether a request is a question ("How many ...?", "What does it do? Answer in one
    sentence."): it opens with a question word, and its first sentence ends with "?"."""
    first = re.split(r"(?<=[.!?])\s", request.strip(), maxsplit=1)[0]
    return bool(re.match(_QUESTION_START, first, re.I)) and first.endswith("?")


def changes_nothing(request: str) -> bool:
    """Whether a request can be done without changing a file: a question, or a command to
    run and report on ("Run the tests and tell me how many fail")."""
    return is_question(request) or asked_action(request) == "run"


def asked_action(request: str) -> Literal["change", "run"] | None:
    """What a request asks to be done: a change in the project, a command run (and nothing
    changed), or None for a question about the project."""
    if is_question(request):
        return None
    if re.search(_CHANGE_VERBS, request, re.I):
        return "change"
    return "run" if re.search(_RUN_VERBS, request, re.I) else None
