"""Commands: a file `.totem/commands/<name>.md` becomes `/name arguments`.

    ---
    description: Review the staged change
    ---
    Review the staged change with `git diff --staged`. Focus on $ARGUMENTS.

`expand("/review errors", commands)` gives what the conversation shows (the text as typed)
and what the model receives (the prompt with `$ARGUMENTS` replaced by "errors"; when the
prompt has no `$ARGUMENTS`, given arguments go on a line of their own at the end). Text
that starts with `/` but names no command gives None: it is sent as it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from totem.agents.definitions import split_front_matter

__all__ = ["ARGUMENTS", "Command", "Expansion", "complete", "expand", "load_commands"]

ARGUMENTS = "$ARGUMENTS"
_NAME = re.compile(r"[A-Za-z0-9][\w.-]*")
_INVOCATION = re.compile(r"/(\S+)(?:\s+(.*))?", re.DOTALL)
_DESCRIPTION_FALLBACK = 80  # characters of the prompt's first line when there is no description


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    description: str
    prompt: str
    path: Path


@dataclass(frozen=True, slots=True)
class Expansion:
    """A command as typed (`shown`, for the conversation) and as sent (`model_text`)."""

    name: str
    arguments: str
    shown: str
    model_text: str


def _read_command(file: Path) -> Command:
    """A command from its file; ValueError or OSError when it cannot be used."""
    if not _NAME.fullmatch(file.stem):
        raise ValueError(
            f"'{file.stem}' cannot be typed as a command: use letters, digits, '-', '_', '.'"
        )
    header, body = split_front_matter(file.read_text(encoding="utf-8"))
    prompt = body.strip()
    if not prompt:
        raise ValueError("the prompt (the text after the front matter) is empty")
    description = header.get("description")
    if not isinstance(description, str) or not description.strip():
        first = prompt.splitlines()[0].strip()
        if len(first) > _DESCRIPTION_FALLBACK:
            first = first[: _DESCRIPTION_FALLBACK - 3].rstrip() + "..."
        description = first
    return Command(file.stem, " ".join(description.split()), prompt, file)


def load_commands(root: Path, *, problems: list[str] | None = None) -> dict[str, Command]:
    """The project's commands by name, from `<root>/.totem/commands/*.md`.

    A file that cannot be used is skipped and named in `problems` when given.
    """
    folder = root / ".totem" / "commands"
    commands: dict[str, Command] = {}
    if not folder.is_dir():
        return commands
    for file in sorted(folder.glob("*.md")):
        try:
            command = _read_command(file)
        except (OSError, ValueError) as exc:  # FrontMatterError, UnicodeDecodeError too
            if problems is not None:
                problems.append(f"Command file {file}: {exc}. It was not loaded.")
            continue
        commands[command.name] = command
    return commands


def expand(text: str, commands: Mapping[str, Command]) -> Expansion | None:
    """`/name arguments` as the model should receive it; None when it names no command."""
    match = _INVOCATION.fullmatch(text.strip())
    if match is None or match.group(1) not in commands:
        return None
    command = commands[match.group(1)]
    arguments = (match.group(2) or "").strip()
    if ARGUMENTS in command.prompt:
        model_text = command.prompt.replace(ARGUMENTS, arguments)
    elif arguments:
        model_text = f"{command.prompt}\n{arguments}"
    else:
        model_text = command.prompt
    return Expansion(command.name, arguments, text, model_text)


def complete(prefix: str, commands: Mapping[str, Command]) -> list[str]:
    """`/name` of each command that starts with what was typed (`/`, `/re`); [] otherwise."""
    if not prefix.startswith("/") or any(c.isspace() for c in prefix):
        return []
    typed = prefix[1:]
    return [f"/{name}" for name in sorted(commands) if name.startswith(typed)]
