"""Tools are declared once: a pydantic input model, a description, a read-only flag, `run`.

The input model gives the JSON schema the model sees (field descriptions are what it reads)
and validates what comes back. Two kinds of failure, as in Codex's tool registry:

    ToolError          goes back to the model as the tool's result; the run goes on
    Aborted / others   end the turn (abort) or are reported as an internal tool error

`ctx` carries everything a tool needs at run time; there is no global state.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

from totem.abort import AbortSignal
from totem.events import Event
from totem.messages import ImageBlock
from totem.policy.permission import PermissionDenied, PermissionService
from totem.policy.questions import QuestionService
from totem.providers.base import ToolSpec
from totem.settings.tools import ToolSettings
from totem.tools.files import DiskFiles, FileAccess
from totem.tools.state import SessionState

if TYPE_CHECKING:  # pydantic loads with the first tool, not at start-up
    from pydantic import BaseModel

    from totem.tools.terminal import Terminal

__all__ = [
    "AfterWrite",
    "SnapshotSink",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolKind",
    "ToolResult",
    "ToolSettings",
    "is_offered",
    "kind_of",
    "parse_arguments",
    "tool_spec",
    "truncate",
]


class ToolError(Exception):
    """A failure the model can act on; its message becomes the tool result."""


# A hook that file tools call after they change a file (see tools/hooks.py); it may be
# async (a language server's diagnostics are awaited).
AfterWrite: TypeAlias = Callable[["ToolContext", Path], "str | Awaitable[str]"]


@dataclass(slots=True)
class ToolResult:
    output: str
    title: str = ""
    images: list[ImageBlock] = field(default_factory=list)
    is_error: bool = False  # it ran, and failed (a command's non-zero exit)


class SnapshotSink(Protocol):
    def save_snapshot(
        self, *, session_id: str, call_id: str, path: str, content: bytes | None
    ) -> None: ...


@dataclass(slots=True)
class ToolContext:
    root: Path
    session_id: str
    call_id: str
    abort: AbortSignal
    permission: PermissionService
    settings: ToolSettings
    snapshots: SnapshotSink | None = None
    emit: Callable[[Event], None] | None = None
    tool_name: str = ""
    questions: QuestionService | None = None
    state: SessionState = field(default_factory=SessionState)
    vision: bool | None = None  # whether the model takes images (None: unknown)
    meta: dict[str, str] = field(default_factory=dict)  # kept on the call's part (a thread)
    # Where this run's questions go: the session's own stream, a sub-agent's included.
    asks: Callable[[Event], None] | None = None
    after_write: Sequence[AfterWrite] = ()  # what write, edit and patch call (tools.hooks)
    # Where read, write, edit and patch take and put a file's content (an editor's buffers
    # over ACP; the disk by default), and where bash runs a line (None: here, see tools/bash).
    files: FileAccess = field(default_factory=DiskFiles)
    terminal: Terminal | None = None
    # Each file's content before this call changed it (None: it did not exist), kept by
    # `snapshot`: what the after-write hooks compare with (new diagnostics).
    before: dict[Path, bytes | None] = field(default_factory=dict)

    async def ask(
        self, permission: str, patterns: list[str], *, title: str,
        always: list[str] | None = None, diff: str = "",
    ) -> None:
        """Ask the person (or the rules) for `permission`; `diff` shows a file change."""
        await self.permission.ask(
            tool=self.tool_name,
            permission=permission,
            patterns=patterns,
            title=title,
            always=always,
            emit=self.asks,
            diff=diff,
        )

    async def resolve(self, path: str) -> Path:
        """The real path of `path` inside the project; outside it only when a rule allows."""
        if not path:
            raise ToolError("The path is empty. Give a path relative to the project root.")
        root = Path(os.path.realpath(self.root))
        expanded = os.path.expanduser(path) if path.startswith("~") else path
        candidate = Path(expanded)
        if not candidate.is_absolute():
            candidate = root / candidate
        lexical = Path(os.path.abspath(candidate))
        real = Path(os.path.realpath(candidate))  # what a rule is matched against
        if _within(real, root):
            return real
        try:
            await self.permission.ask(
                tool=self.tool_name,
                permission="external_directory",
                patterns=[str(real)],
                title=f"access {real}, outside the project",
                emit=self.asks,
            )
        except PermissionDenied as exc:
            # worded from the path as given: never where an outside link leads, nor whether
            # anything is there
            how = ("leads outside the project root through a symbolic link inside it"
                   if _within(lexical, root) else "is outside the project root")
            raise ToolError(
                f"'{path}' {how} ({root}). Only paths inside the project can be "
                f"used; give a path relative to the root.{_refused_how(exc)}"
            ) from None
        return real

    def relative(self, path: Path) -> str:
        root = Path(os.path.realpath(self.root))
        try:
            return str(path.relative_to(root)) or "."
        except ValueError:
            return str(path)

    def snapshot(self, path: Path) -> None:
        """Record a file's content (or its absence) before it changes."""
        content = path.read_bytes() if path.is_file() else None
        self.before.setdefault(path, content)
        if self.snapshots is None:
            return
        self.snapshots.save_snapshot(
            session_id=self.session_id, call_id=self.call_id, path=str(path), content=content
        )


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _refused_how(denied: PermissionDenied) -> str:
    """Who refused a path outside: the person (with what they said), or nobody could allow
    it; a rule goes without saying. (The question's own title, with the real path, stays
    with the person.)"""
    if denied.by_user:
        said = denied.message.partition(" The user said: ")[2]
        return " The person refused it." + (f" They said: {said}" if said else "")
    if "rule" in denied.message:
        return ""
    return " Nobody can allow it in this run."


# Where a tool comes from. A tool class says so with a `kind` attribute; without one it is
# built in. Code that treats tools differently by origin asks `kind_of`, never the name.
ToolKind: TypeAlias = Literal["builtin", "websearch", "task", "mcp", "integration"]


def kind_of(tool: Tool) -> ToolKind:
    match getattr(tool, "kind", "builtin"):
        case "websearch":
            return "websearch"
        case "task":
            return "task"
        case "mcp":
            return "mcp"
        case "integration":
            return "integration"
        case _:
            return "builtin"


def is_offered(tool: Tool) -> bool:
    """Whether the model is shown the tool's definition; a tool with `offered = False` may
    still be called (an MCP tool listed by name only, in mcp_tool_schema's description)."""
    return bool(getattr(tool, "offered", True))


class Tool(Protocol):
    """A tool class sets these as ClassVars; `lazy.LazyTool` stands in until first use."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def read_only(self) -> bool: ...

    @property
    def Input(self) -> type[BaseModel]: ...  # noqa: N802

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult: ...


def _clean_schema(node: Any) -> Any:
    """Drop pydantic's `title` keys (tokens the model does not need), not properties so named."""
    if isinstance(node, dict):
        return {
            k: ({p: _clean_schema(v2) for p, v2 in v.items()} if k == "properties" and
                isinstance(v, dict) else _clean_schema(v))
            for k, v in node.items() if not (k == "title" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [_clean_schema(v) for v in node]
    return node


def tool_spec(tool: Tool) -> ToolSpec:
    own = getattr(tool, "spec", None)
    if callable(own):  # an MCP tool: its server's own JSON schema
        spec: ToolSpec = own()
        return spec
    schema = _clean_schema(tool.Input.model_json_schema())
    return ToolSpec(name=tool.name, description=tool.description, parameters=schema)


def parse_arguments(tool: Tool, raw: str | dict[str, Any] | None) -> BaseModel:
    """Validate the model's arguments; a ToolError worded for the model on any problem."""
    if isinstance(raw, str):
        text = raw.strip() or "{}"
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ToolError(
                f"The arguments for {tool.name} are not valid JSON "
                f"({exc.msg.removesuffix(' at')} at position {exc.pos}). Send a JSON object "
                "matching the tool's parameters."
            ) from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ToolError(f"The arguments for {tool.name} must be a JSON object.")
    raw = {k: v for k, v in raw.items() if v is not None}  # null means "use the default"
    from pydantic import ValidationError

    try:
        return tool.Input.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ToolError(f"Invalid arguments for {tool.name}: {problems}.") from None


def truncate(text: str, limit: int, *, hint: str = "") -> str:
    """Keep the head and tail of a long output and say what was cut."""
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3) :]
    cut = len(text) - len(head) - len(tail)
    note = f"\n\n[... {cut} characters truncated{'; ' + hint if hint else ''} ...]\n\n"
    return head + note + tail
