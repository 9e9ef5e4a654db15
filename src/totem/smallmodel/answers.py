"""Checks on a small model's closing answer, against the project and the run, never against
the request's words: did it copy its instructions, did it look, do the paths it names
exist, and did it change what it says it changed?

Small models answer from nothing ("ANSWER: 8080" for a value never read), name files that
do not exist, and close with "I have fixed the typo" when no change was made.
"""

from __future__ import annotations

import re  # patterns compiled on first use (re caches them), not at start-up
from collections.abc import Iterable, Mapping, Sequence

from totem.messages import Message, ToolPart
from totem.smallmodel.surface import text
from totem.tools.base import Tool

__all__ = ["claims_change", "copied", "missing_paths", "named_paths", "ran_change"]

_EXTENSIONS = (
    "py|pyi|js|mjs|cjs|ts|tsx|jsx|java|kt|go|rs|rb|php|c|h|cc|cpp|hpp|cs|swift|sh|bash|sql|"
    "json|yaml|yml|toml|ini|cfg|conf|env|txt|md|rst|html|htm|css|scss|xml|csv|lock|gradle"
)
_PATH = rf"(?<![\w/.:@-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:{_EXTENSIONS}))(?![\w/-])"
# what the model's answer says it did (its words, checked against what the session did)
_CLAIM = (
    r"\b(?:I(?:'ve| have)?|we(?:'ve| have)?|has been|have been|was|were|is now|are now)\s+"
    r"(?:(?:already|now|successfully|just|also)\s+)*"
    r"(?:fixed|updated|created|renamed|changed|modified|edited|written|wrote|removed|"
    r"deleted|added|replaced|corrected|moved|applied|made the change)\b"
)
_NEGATION = r"\b(?:not|no|nothing|never|none|cannot)\b|n't\b"
MIN_COPIED_CHARS = 30  # a shorter line may match the prompt by chance
SHOWN_FILES = 30


def claims_change(answer: str) -> bool:
    """Whether the answer says something in the project was changed (not "nothing was")."""
    for match in re.finditer(_CLAIM, answer, re.I):
        sentence = re.split(r"[.!?\n]", answer[: match.start()])[-1]
        if not re.search(_NEGATION, sentence + match.group(0), re.I):
            return True
    return False


def named_paths(answer: str) -> list[str]:
    """The file paths an answer names (those with a known file extension)."""
    paths: list[str] = []
    for match in re.finditer(_PATH, answer):
        path = match.group(1).removeprefix("./")
        if path not in paths:
            paths.append(path)
    return paths


def missing_paths(answer: str, files: Iterable[str], seen: str) -> list[str]:
    """The paths the answer names that the project lacks (left out: those in `seen`, what
    the request and the run's calls hold)."""
    known = set(files)
    return [p for p in named_paths(answer)
            if p not in known and not any(f.endswith("/" + p) for f in known) and p not in seen]


def copied(answer: str, told: str) -> bool:
    """An answer that is mostly text copied from what the model was told (its prompt, a
    tool's description) rather than an answer."""
    told = " ".join(told.split())
    lines = [" ".join(line.split()) for line in answer.splitlines()]
    copied_chars = sum(len(line) for line in lines if len(line) >= MIN_COPIED_CHARS
                       and line.strip("*-.0123456789 ") in told)
    return copied_chars * 2 >= len(" ".join(answer.split())) > 0


def _ran(part: ToolPart) -> bool:
    """A call that ran: it completed, or it is a command that ran and failed (a test run
    with failures exits non-zero), not one that was refused or never started."""
    if part.state == "completed":
        return True
    return (part.state == "error" and part.name == "bash" and part.title != "denied"
            and not part.output.startswith(("Refused", "Not run", "[Aborted")))


def ran_change(history: Iterable[Message], tools: Mapping[str, Tool],
               *, besides: frozenset[str] = frozenset()) -> bool:
    """Whether a call that can change the project (or run a command) ran; the calls of
    `besides` (call ids: totem's own) do not count."""
    for message in history:
        for part in message.parts:
            if isinstance(part, ToolPart) and _ran(part) and part.call_id not in besides:
                tool = tools.get(part.name)
                if tool is None or not tool.read_only:
                    return True
    return False


def look_nudge(files: Sequence[str]) -> str:
    return text("look").replace("{files}", ", ".join(files[:SHOWN_FILES]))


def missing_path_nudge(paths: Sequence[str], files: Sequence[str]) -> str:
    return (text("missing_path").replace("{paths}", ", ".join(paths))
            .replace("{files}", ", ".join(files[:SHOWN_FILES])))


def copied_nudge(request: str) -> str:
    return text("copied").replace("{request}", request)
