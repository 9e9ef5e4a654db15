"""Agent definitions: the parsed form, and the Markdown files they come from. They are
gathered from four places (`agents/load.py`); the last place wins for a name:

    totem/agents/builtin/*.md       built in (explore, general)
    store, scope "global"           saved for all projects
    store, scope "project"          saved for this project
    <root>/.totem/agents/*.md       files of the project

A file is Markdown with YAML front matter; the body is the agent's prompt:

    ---
    name: reviewer                  (default: the file's name without .md)
    description: Reviews a change and reports problems
    tools: [read, glob, grep]       (a list or "a, b"; left out or "all": every tool)
    maxsteps: 20
    model: ollama/qwen3:8b
    ---
    You review code ...

A malformed file is reported in `problems` (naming the file) and skipped; the others load.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    pass

__all__ = [
    "BUILTIN_DIR",
    "AgentDef",
    "AgentError",
    "AgentSource",
    "FrontMatterError",
    "check_name",
    "parse_agent",
    "parse_max_steps",
    "parse_tools",
    "project_key",
    "split_front_matter",
    "to_markdown",
]

AgentSource: TypeAlias = Literal["builtin", "global", "project", "file"]

BUILTIN_DIR = Path(__file__).parent / "builtin"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_FIELDS = {"name", "description", "tools", "maxsteps", "model"}
_ALIASES = {"max_steps": "maxsteps", "maxSteps": "maxsteps"}
_ALL_TOOLS = {"all", "*"}


class FrontMatterError(ValueError):
    """The YAML header of a Markdown file cannot be read; the message says why."""


class AgentError(ValueError):
    """A definition that cannot be used; the message says why, for a person."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentDef:
    """One agent: what the task tool offers and what its nested run gets."""

    name: str
    description: str
    tools: tuple[str, ...] | None = None  # None: every tool the runner allows
    max_steps: int | None = None  # None: the session's step limit
    model: str | None = None  # "provider/model"; None: the conversation's model
    prompt: str
    source: AgentSource
    path: str | None = None  # the file it came from (built in and file agents)

    def allows(self, tool: str) -> bool:
        return self.tools is None or tool in self.tools


def project_key(root: Path) -> str:
    """How the store names a project: its resolved root, as sessions do."""
    return str(root.resolve())


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The YAML header between the opening and closing `---` lines, and the body after it.

    Text that does not start with `---` has no header: `({}, text)`.
    """
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        raise FrontMatterError("the front matter opened by '---' on line 1 is never closed")
    simple = _simple_header(lines[1:end])
    if simple is not None:
        return simple, "".join(lines[end + 1 :])
    import yaml  # deferred: about 40 ms, and only needed when a header is not plain

    try:
        data = yaml.safe_load("".join(lines[1:end]))
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"invalid YAML in the front matter: {_yaml_problem(exc)}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontMatterError("the front matter must be fields, one 'key: value' per line")
    return {str(key): value for key, value in data.items()}, "".join(lines[end + 1 :])


_PLAIN_LINE = re.compile(r"^([A-Za-z_][\w-]*):[ \t]*(.*?)[ \t]*$")
_WORD_LIST = re.compile(r"^\[([\w\s,.-]*)\]$")
_NOT_PLAIN = tuple("[{\"'|>&*!%@`#-")


def _simple_header(lines: list[str]) -> dict[str, Any] | None:
    """`key: plain text` lines parsed without YAML (start-up reads every skill's header);
    None when any line needs a real YAML parser (quotes, lists, blocks, comments...)."""
    data: dict[str, Any] = {}
    for line in lines:
        if not line.strip():
            continue
        match = _PLAIN_LINE.match(line.rstrip("\r\n"))
        if match is None:
            return None
        key, value = match.groups()
        words = _WORD_LIST.match(value)
        if words is not None:  # [read, glob, grep]
            data[key] = [w.strip() for w in words.group(1).split(",") if w.strip()]
            continue
        if value.startswith(_NOT_PLAIN) or ": " in value or " #" in value:
            return None
        if value.lower() in ("true", "false", "null", "~", "yes", "no", "on", "off"):
            return None
        data[key] = int(value) if value.isdigit() else value or None
    return data


def _yaml_problem(exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
    if mark is None:
        return str(problem)
    return f"{problem} (line {mark.line + 2} of the file)"  # +1 for '---', +1 for 1-based


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise AgentError(
            f"the name {name!r} is not valid: use letters, digits, '-' and '_' "
            "(up to 64 characters, starting with a letter or digit)"
        )
    return name


def parse_tools(value: object) -> tuple[str, ...] | None:
    """A tool list from a YAML list or a comma-separated text; None (or "all") is every tool."""
    if value is None:
        return None
    if isinstance(value, str):
        if value.strip().lower() in _ALL_TOOLS:
            return None
        value = [item for item in re.split(r"[,\s]+", value) if item]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise AgentError("tools must be a list of tool names, such as [read, glob, grep]")
    names = [item.strip() for item in value if item.strip()]
    if any(name in _ALL_TOOLS for name in names):
        return None
    return tuple(dict.fromkeys(names))


def parse_max_steps(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise AgentError(f"maxsteps must be a whole number of at least 1, not {value!r}")
    return value


def _text(fields: dict[str, Any], key: str) -> str | None:
    value = fields.get(key)
    if value is None:
        return None
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise AgentError(f"{key} must be text, not {value!r}")
    return str(value).strip() or None


def parse_agent(
    text: str,
    *,
    source: AgentSource,
    path: str | None = None,
    default_name: str | None = None,
    notes: list[str] | None = None,
) -> AgentDef:
    """An agent from Markdown with front matter. Unknown fields are named in `notes`."""
    try:
        header, body = split_front_matter(text)
    except FrontMatterError as exc:
        raise AgentError(str(exc)) from None
    fields = {_ALIASES.get(key, key): value for key, value in header.items()}
    unknown = sorted(set(fields) - _FIELDS)
    if unknown and notes is not None:
        notes.append(f"unknown field(s) {', '.join(unknown)} ignored")
    name = _text(fields, "name") or default_name
    if name is None:
        raise AgentError("the front matter has no name")
    description = _text(fields, "description")
    if description is None:
        raise AgentError("the front matter has no description (the model chooses by it)")
    prompt = body.strip()
    if not prompt:
        raise AgentError("the prompt (the text after the front matter) is empty")
    return AgentDef(
        name=check_name(name),
        description=description,
        tools=parse_tools(fields.get("tools")),
        max_steps=parse_max_steps(fields.get("maxsteps")),
        model=_text(fields, "model"),
        prompt=prompt,
        source=source,
        path=path,
    )


def to_markdown(agent: AgentDef) -> str:
    """The agent as a file `parse_agent` reads back (for `agents show`, or to save as a file)."""
    import yaml

    header: dict[str, Any] = {"name": agent.name, "description": agent.description}
    if agent.tools is not None:
        header["tools"] = list(agent.tools)
    if agent.max_steps is not None:
        header["maxsteps"] = agent.max_steps
    if agent.model:
        header["model"] = agent.model
    front = yaml.safe_dump(
        header, sort_keys=False, allow_unicode=True, default_flow_style=None, width=100
    )
    return f"---\n{front}---\n{agent.prompt.strip()}\n"

