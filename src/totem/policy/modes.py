"""Session modes, as Claude Code names them: what a session's runs may do.

    default       every tool; each action asked about unless a rule allows it
    plan          reading tools only (and todo): the model looks, then proposes a plan
    accept_edits  file changes (write, edit, patch) made without asking; the rest as default

Plan mode is held in two places, so a model cannot talk its way out of it: the run is
offered only `PLAN_TOOLS`, every other tool it names is a stand-in that refuses
(`refusing`), and the permission layer denies every permission but reading ones
(`PermissionService.for_mode`), which also covers a sub-agent's calls and a tool that would
change something through another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias

from totem.policy.permission import PermissionDenied, PermissionService

if TYPE_CHECKING:
    from pydantic import BaseModel

    from totem.tools.base import Tool, ToolContext, ToolResult

__all__ = ["EDIT_PERMISSIONS", "MODES", "PLAN_PERMISSIONS", "PLAN_TOOLS", "ModeInfo",
           "SessionMode", "mode_of", "mode_permission", "next_mode", "plan_tools", "refusal"]

SessionMode: TypeAlias = Literal["default", "plan", "accept_edits"]


@dataclass(frozen=True, slots=True)
class ModeInfo:
    name: SessionMode
    title: str
    description: str


MODES: tuple[ModeInfo, ...] = (
    ModeInfo("default", "Normal", "Every tool; actions are asked about unless a rule allows "
             "them."),
    ModeInfo("plan", "Plan", "Read-only: the model looks around and proposes a plan, which "
             "you approve, edit or send back; nothing is changed."),
    ModeInfo("accept_edits", "Accept edits", "File changes (write, edit, patch) are made "
             "without asking; commands are still asked about."),
)
# The tools a plan-mode run may call: the reading ones, the task list, a question.
PLAN_TOOLS = frozenset({"read", "glob", "grep", "fetch", "websearch", "skill", "ask", "todo"})
# The permissions a plan-mode run may be given (others are denied before any rule).
PLAN_PERMISSIONS = frozenset({"read", "glob", "grep", "fetch", "websearch",
                              "external_directory"})
EDIT_PERMISSIONS = frozenset({"edit"})  # what accept_edits allows without asking


def mode_of(name: str) -> SessionMode:
    """`name` as a mode; ValueError naming the modes for anything else."""
    for info in MODES:
        if info.name == name:
            return info.name
    raise ValueError(f"unknown mode {name!r} (modes: {', '.join(m.name for m in MODES)})")


def next_mode(mode: SessionMode) -> SessionMode:
    """The mode after `mode` in the cycle (Shift-Tab): default → plan → accept_edits."""
    names = [info.name for info in MODES]
    return names[(names.index(mode) + 1) % len(names)]


def refusal(name: str) -> str:
    return (f"Refused: {name} is not available in plan mode, which only reads. Finish "
            "looking, then answer with your plan as a numbered list of steps; the person "
            "approves it before anything is changed.")


class _Refusing:
    """A tool of the session kept under its name in plan mode, refusing every call."""

    read_only: ClassVar[bool] = True
    offered: ClassVar[bool] = False  # the model is not shown it

    def __init__(self, tool: Tool) -> None:
        self.name = tool.name
        self.description = tool.description
        self._tool = tool

    @property
    def Input(self) -> type[BaseModel]:  # noqa: N802
        return self._tool.Input

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        raise PermissionDenied(refusal(self.name))


def plan_tools(tools: list[Tool]) -> list[Tool]:
    """The tools of a plan-mode run: `PLAN_TOOLS` as they are, every other one refusing."""
    return [tool if tool.name in PLAN_TOOLS else _Refusing(tool) for tool in tools]


def mode_permission(permission: PermissionService, mode: SessionMode) -> PermissionService:
    """The permission service of a run in `mode` (the same one for default)."""
    if mode == "plan":
        return permission.bounded(only=PLAN_PERMISSIONS, reason=refusal("this action"))
    if mode == "accept_edits":
        return permission.bounded(only=None, free=EDIT_PERMISSIONS)
    return permission
