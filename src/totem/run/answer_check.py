"""Checks on a small model's closing answer: did it look, do its paths exist, did it change
what it says it changed?

Small models answer from nothing ("ANSWER: 8080" for a value never read), name files that
do not exist, and close with "I have fixed the typo" when no change was made. The loop asks
`AnswerCheck` before it accepts an answer: once per run a nudge (a user-role message) when
the model used no tool at all, or named paths the project does not have; and, when the
answer claims a change but the session made none, a distinct outcome instead of success.
"""

from __future__ import annotations

import os
import re  # patterns compiled on first use (re caches them), not at start-up
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from totem.messages import Message, ToolPart
from totem.run.request_kind import asked_action, asks_change, changes_nothing, is_question
from totem.tools.base import Tool

__all__ = ["AnswerCheck", "asked_action", "asks_change", "changes_nothing", "claims_change",
           "is_question",
           "named_paths"]

_EXTENSIONS = (
    "py|pyi|js|mjs|cjs|ts|tsx|jsx|java|kt|go|rs|rb|php|c|h|cc|cpp|hpp|cs|swift|sh|bash|sql|"
    "json|yaml|yml|toml|ini|cfg|conf|env|txt|md|rst|html|htm|css|scss|xml|csv|lock|gradle"
)
_PATH = rf"(?<![\w/.:@-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:{_EXTENSIONS}))(?![\w/-])"
_CLAIM = (
    r"\b(?:I(?:'ve| have)?|we(?:'ve| have)?|has been|have been|was|were|is now|are now)\s+"
    r"(?:(?:already|now|successfully|just|also)\s+)*"
    r"(?:fixed|updated|created|renamed|changed|modified|edited|written|wrote|removed|"
    r"deleted|added|replaced|corrected|moved|applied|made the change)\b"
)
_NEGATION = r"\b(?:not|no|nothing|never|none|cannot)\b|n't\b"
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox"})
_MAX_FILES = 20_000
_SHOWN_FILES = 30  # files named in a nudge


MIN_COPIED_CHARS = 30  # a shorter line may match the prompt by chance
MIN_REQUEST_WORDS = 3  # "hi", "thanks": no project question to look into
MAX_ACT_NUDGES = 2  # a failed edit after the first nudge is worth one more try


def claims_change(text: str) -> bool:
    """Whether the answer says something in the project was changed (not "nothing was")."""
    for match in re.finditer(_CLAIM, text, re.I):
        sentence = re.split(r"[.!?\n]", text[: match.start()])[-1]
        if not re.search(_NEGATION, sentence + match.group(0), re.I):
            return True
    return False


def _project_files(root: Path) -> set[str]:
    """Relative paths of the project's files and folders (the first _MAX_FILES)."""
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
        base = os.path.relpath(folder, root)
        for name in [*dirs, *files]:
            found.add(name if base == "." else f"{base}/{name}")
            if len(found) >= _MAX_FILES:
                return found
    return found


def _points_at_code(answer: str) -> bool:
    """Whether an answer names a place in the code: a path, `code`, or a snake_case name."""
    return bool(named_paths(answer) or re.search(r"`[^`]+`|\b[a-z]+_[a-z0-9_]+\b", answer))


def named_paths(text: str) -> list[str]:
    """The file paths an answer names (those with a known file extension)."""
    paths: list[str] = []
    for match in re.finditer(_PATH, text):
        path = match.group(1).removeprefix("./")
        if path not in paths:
            paths.append(path)
    return paths


def _some_files(files: set[str], root: Path) -> list[str]:
    """Up to _SHOWN_FILES of the project's files, the shallowest first."""
    plain = [f for f in files if (root / f).is_file()]
    return sorted(plain, key=lambda f: (f.count("/"), f))[:_SHOWN_FILES]


def _missing(paths: Iterable[str], files: set[str]) -> list[str]:
    missing = []
    for path in paths:
        if path in files or any(f.endswith("/" + path) for f in files):
            continue
        missing.append(path)
    return missing


def _ran(part: ToolPart) -> bool:
    """Whether a call ran: it completed, or it is a command that ran and failed (a test run
    with failures exits non-zero), not one that was refused or never started."""
    if part.state == "completed":
        return True
    return (part.state == "error" and part.name == "bash" and part.title != "denied"
            and not part.output.startswith(("Refused", "Not run", "[Aborted")))


def _changed(
    history: Iterable[Message], tools: Mapping[str, Tool], *, besides: frozenset[str] = frozenset()
) -> bool:
    """Whether a call that can change the project (or run a command) ran in the session;
    the calls of `besides` (call ids: totem's own looking ahead) do not count."""
    for message in history:
        for part in message.parts:
            if isinstance(part, ToolPart) and _ran(part) and part.call_id not in besides:
                tool = tools.get(part.name)
                if tool is None or not tool.read_only:
                    return True
    return False


class AnswerCheck:
    """One run's checks on its closing answer; each nudge is given at most once."""

    def __init__(self, root: Path, tools: Mapping[str, Tool]) -> None:
        self.root = root
        self.tools = tools
        self.nudged = False
        self.copy_nudged = False
        self.act_nudges = 0
        self.absent_nudged = False
        self.list_nudged = False
        self.state_nudged: set[str] = set()  # the kinds of unfinished work already said
        self.must_act = False  # the next step must be a call, where the server can hold it
        # the next step must be the answer, which is in hand: "tests" (what the request
        # asked to run has run) or "done" (a change did what the request gives word for word)
        self.must_answer: Literal["", "tests", "done"] = ""
        # where a step that must be a change may make it, when the request says
        # (run/request_state.py change_targets): {"edit": [...], "write": [...]}
        self.targets: dict[str, list[str]] | None = None
        self.looked_ahead: set[str] = set()  # call ids of totem's reading ahead (a test run)

    def nudge(self, answer: str, run: list[Message], request: str) -> str | None:
        """The nudge for an answer given without looking, or naming paths that do not exist
        (left out: those the request or the run's tool calls mention)."""
        from totem.prompt.small import look_nudge, missing_path_nudge

        if self.nudged or not answer.strip() or len(request.split()) < MIN_REQUEST_WORDS:
            return None  # nothing to say, said once already, or a greeting: nothing to look at
        parts = [p for m in run for p in m.parts if isinstance(p, ToolPart)]
        files = _project_files(self.root)
        if not parts:
            self.nudged = True
            return look_nudge(_some_files(files, self.root))
        seen = request + "".join(f"{p.input} {p.output}" for p in parts)
        missing = [p for p in _missing(named_paths(answer), files) if p not in seen]
        if missing:
            self.nudged = True
            return missing_path_nudge(missing, _some_files(files, self.root))
        return None

    def copied(self, answer: str, instructions: str) -> bool:
        """True, once per run, for an answer that is mostly text copied from what the model
        was told (its prompt, a tool's description) rather than an answer."""
        if self.copy_nudged:
            return False
        told = " ".join(instructions.split())
        lines = [" ".join(line.split()) for line in answer.splitlines()]
        copied = sum(len(line) for line in lines if len(line) >= MIN_COPIED_CHARS
                     and line.strip("*-.0123456789 ") in told)
        self.copy_nudged = copied * 2 >= len(" ".join(answer.split())) > 0
        return self.copy_nudged

    def review(
        self, answer: str, *, run: list[Message], request: str, told: str
    ) -> tuple[str, str] | None:
        """What is wrong with a small model's answer, first found first: (a notice for the
        person, the nudge for the model), or None when nothing is."""
        from totem.prompt.small import copied_nudge, state_nudge
        from totem.run.request_state import file_ops_left, unresolved_check

        if self.copied(answer, told):
            return ("The answer repeats the instructions the model was given; asking it to "
                    "answer the request.", copied_nudge(request))
        nudge = self.nudge(answer, run, request)
        if nudge is not None:
            return ("The answer was not checked against the project; asking the model to "
                    "look with tools first.", nudge)
        listing = self.list_nudge(answer, request)
        if listing is not None:
            return ("The answer does not list the files it was asked for; asking the model "
                    "again.", listing)
        absent = self.absent_nudge(answer, request)
        if absent is not None:
            return ("The answer is about something the project does not mention; asking the "
                    "model to check.", absent)
        act = self.act_nudge(run, request)
        if act is not None:
            left = file_ops_left(request, self.root)
            if left is not None:  # the exact call is more use than "do it now"
                self.state_nudged.add("files")
                act = state_nudge(left, request)
            return ("The request asks for a change or a command and none was made; asking "
                    "the model to do it.", act)
        for kind, left in (("files", file_ops_left(request, self.root)),
                           ("check", unresolved_check(run))):
            if left is not None and kind not in self.state_nudged:
                self.state_nudged.add(kind)
                self.must_act = True
                return ("The request is not done yet; asking the model to finish it.",
                        state_nudge(left, request))
        return None

    def list_nudge(self, answer: str, request: str) -> str | None:
        """Once per run: asked to list the files ("list the files here and tell me what
        this project does"), an answer that names fewer than half of the project's top
        entries gets them, and is asked again (the 1.5B described the project only)."""
        from totem.prompt.small import list_nudge

        if self.list_nudged or not re.search(
                r"\b(?:list|show)\b[^.?!]*\b(?:files|folders|contents)\b|"
                r"\b(?:what|which) files\b", request, re.I):
            return None
        try:
            names = sorted(entry.name + ("/" if entry.is_dir() else "")
                           for entry in os.scandir(self.root)
                           if entry.name not in _SKIP_DIRS)[:_SHOWN_FILES]
        except OSError:
            return None
        named = [n for n in names if n.rstrip("/") in answer]
        if not names or len(named) * 2 >= len(names):
            return None
        self.list_nudged = True
        return list_nudge(names, request)

    def absent_nudge(self, answer: str, request: str) -> str | None:
        """Once per run: for a question about names the project nowhere mentions (Redis,
        say), answered as if they were there, the nudge to say that they are not."""
        from totem.prompt.small import absent_nudge
        from totem.run.read_ahead import absent_names

        if self.absent_nudged or asked_action(request) is not None:
            return None
        if re.search(_NEGATION, answer, re.I) or not _points_at_code(answer):
            return None  # it says no, or not there, or names no place in the project
        absent = absent_names(self.root, request)
        if not absent:
            return None
        self.absent_nudged = True
        return absent_nudge(absent, request)

    def act_nudge(self, run: list[Message], request: str) -> str | None:
        """Up to MAX_ACT_NUDGES times per run: the nudge for an answer to a request for a
        change, when the run changed nothing yet (the next step is then held to a call
        where the server can hold it)."""
        from totem.prompt.small import act_nudge

        action = asked_action(request)
        if self.act_nudges >= MAX_ACT_NUDGES or action is None or _changed(
                run, self.tools, besides=frozenset(self.looked_ahead)):
            return None
        self.act_nudges += 1
        self.must_act = True
        return act_nudge(request, run=action == "run")

    def changed(self, run: Iterable[Message]) -> bool:
        """Whether the run changed the project (or ran a command)."""
        return _changed(run, self.tools, besides=frozenset(self.looked_ahead))

    def unbacked_claim(self, answer: str, history: Iterable[Message]) -> bool:
        """The answer claims a change, and the session made none."""
        return claims_change(answer) and not _changed(
            history, self.tools, besides=frozenset(self.looked_ahead))
