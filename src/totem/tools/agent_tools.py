"""agent_list, agent_create, agent_edit, agent_delete: the model manages saved agents.

They work on the same store as `totem agents` and the page's Agents panel (scope "project"
by default, "global" for all projects). Every write shows the whole definition in its
question (`agents` permission, pattern the agent's name) and changes nothing without a yes.
An agent saved here is one the `task` tool can start at once: it reads the definitions anew
for each task. Built-in agents and .totem/agents files are not changed here.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import BaseModel, Field

from totem.agents.definitions import AgentDef, AgentError, check_name, project_key, to_markdown
from totem.agents.load import load_agents
from totem.agents.saved import delete_agent, get_saved_agent, save_agent
from totem.tools.base import ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from totem.store.base import Store

__all__ = ["AgentCreate", "AgentDelete", "AgentEdit", "AgentList"]

Scope = Literal["project", "global"]
_SCOPE_TEXT = "project (default) or global (every project)."


class AgentListInput(BaseModel):
    pass


class AgentCreateInput(BaseModel):
    name: str = Field(description="Letters, digits, - and _.")
    description: str = Field(description="What it does; agents are chosen by it.")
    prompt: str = Field(description="Its instructions.")
    tools: list[str] | None = Field(None, description="Tool names it may use (default: all).")
    maxsteps: int | None = Field(None, ge=1, le=500, description="Its step limit.")
    scope: Scope = Field("project", description=_SCOPE_TEXT)


class AgentEditInput(BaseModel):
    name: str = Field(description="The saved agent to change.")
    description: str | None = Field(None, description="A new description.")
    prompt: str | None = Field(None, description="New instructions.")
    tools: list[str] | None = Field(None, description="New tool names (['all']: every tool).")
    maxsteps: int | None = Field(None, ge=1, le=500, description="A new step limit.")
    scope: Scope = Field("project", description=_SCOPE_TEXT)


class AgentDeleteInput(BaseModel):
    name: str = Field(description="The saved agent to delete.")
    scope: Scope = Field("project", description=_SCOPE_TEXT)


class _StoreTool:
    kind: ClassVar[str] = "integration"

    def __init__(self, store: Callable[[], Store | None]) -> None:
        self._store = store

    def db(self) -> sqlite3.Connection:
        db = getattr(self._store(), "db", None)
        if not isinstance(db, sqlite3.Connection):
            raise ToolError("This session's store keeps no saved agents.")
        return db


def _where(scope: Scope, ctx: ToolContext) -> tuple[str | None, str]:
    if scope == "global":
        return None, "for all projects"
    return project_key(ctx.root), "for this project"


def _shown(agent: AgentDef) -> str:
    return "\n".join("    " + line for line in to_markdown(agent).splitlines())


class AgentList(_StoreTool):
    name: ClassVar[str] = "agent_list"
    description: ClassVar[str] = "List the agents the task tool can start, and where each is from."
    read_only: ClassVar[bool] = True
    Input: ClassVar[type[BaseModel]] = AgentListInput

    async def run(self, args: AgentListInput, ctx: ToolContext) -> ToolResult:
        agents = load_agents(ctx.root, self.db())
        lines = []
        for name, agent in sorted(agents.items()):
            tools = ", ".join(agent.tools) if agent.tools is not None else "all tools"
            lines.append(f"{name} ({agent.source}; {tools}): {agent.description}")
        return ToolResult("\n".join(lines) or "No agents.", title=f"{len(lines)} agents")


def _checked(agent: AgentDef) -> AgentDef:
    if not agent.description.strip():
        raise ToolError("The description is empty: agents are chosen by it.")
    if not agent.prompt.strip():
        raise ToolError("The prompt is empty.")
    return agent


class AgentCreate(_StoreTool):
    name: ClassVar[str] = "agent_create"
    description: ClassVar[str] = "Save a new agent that the task tool can start (asks first)."
    read_only: ClassVar[bool] = False
    Input: ClassVar[type[BaseModel]] = AgentCreateInput

    async def run(self, args: AgentCreateInput, ctx: ToolContext) -> ToolResult:
        project, label = _where(args.scope, ctx)
        db = self.db()
        try:
            name = check_name(args.name)
        except AgentError as exc:
            raise ToolError(str(exc)) from None
        if get_saved_agent(db, name, project=project) is not None:
            raise ToolError(f"An agent named '{name}' is already saved {label}; "
                            "change it with agent_edit.")
        agent = _checked(AgentDef(
            name=name, description=args.description.strip(), prompt=args.prompt.strip(),
            tools=tuple(args.tools) if args.tools is not None else None,
            max_steps=args.maxsteps, source="global" if project is None else "project"))
        await ctx.ask("agents", [name], title=f"save the agent '{name}' {label}:\n"
                      f"{_shown(agent)}")
        save_agent(db, agent, project=project)
        return ToolResult(f"Saved the agent '{name}' {label}. The task tool can start it now "
                          f"(agent: {name}).{_winner(ctx, db, agent)}", title=name)


class AgentEdit(_StoreTool):
    name: ClassVar[str] = "agent_edit"
    description: ClassVar[str] = "Change a saved agent; only the fields given change (asks first)."
    read_only: ClassVar[bool] = False
    Input: ClassVar[type[BaseModel]] = AgentEditInput

    async def run(self, args: AgentEditInput, ctx: ToolContext) -> ToolResult:
        project, label = _where(args.scope, ctx)
        db = self.db()
        agent = get_saved_agent(db, args.name, project=project)
        if agent is None:
            raise ToolError(_not_saved(ctx, db, args.name, label))
        changes: dict[str, object] = {}
        if args.description is not None:
            changes["description"] = args.description.strip()
        if args.prompt is not None:
            changes["prompt"] = args.prompt.strip()
        if args.tools is not None:
            changes["tools"] = None if args.tools in (["all"], ["*"]) else tuple(args.tools)
        if args.maxsteps is not None:
            changes["max_steps"] = args.maxsteps
        if not changes:
            raise ToolError("Nothing to change: give description, prompt, tools or maxsteps.")
        changed = _checked(dataclasses.replace(agent, **changes))  # type: ignore[arg-type]
        await ctx.ask("agents", [agent.name], title=f"change the agent '{agent.name}' saved "
                      f"{label} ({', '.join(sorted(changes))}) to:\n{_shown(changed)}")
        save_agent(db, changed, project=project)
        return ToolResult(f"Changed the agent '{agent.name}' saved {label}: "
                          f"{', '.join(sorted(changes))}.{_winner(ctx, db, changed)}",
                          title=agent.name)


class AgentDelete(_StoreTool):
    name: ClassVar[str] = "agent_delete"
    description: ClassVar[str] = "Delete a saved agent (asks first)."
    read_only: ClassVar[bool] = False
    Input: ClassVar[type[BaseModel]] = AgentDeleteInput

    async def run(self, args: AgentDeleteInput, ctx: ToolContext) -> ToolResult:
        project, label = _where(args.scope, ctx)
        db = self.db()
        agent = get_saved_agent(db, args.name, project=project)
        if agent is None:
            raise ToolError(_not_saved(ctx, db, args.name, label))
        await ctx.ask("agents", [agent.name], title=f"delete the agent '{agent.name}' saved "
                      f"{label}:\n{_shown(agent)}")
        delete_agent(db, agent.name, project=project)
        now = load_agents(ctx.root, db).get(agent.name)
        after = f" '{agent.name}' is now the {now.source} one." if now is not None else ""
        return ToolResult(f"Deleted the agent '{agent.name}' saved {label}.{after}",
                          title=agent.name)


def _winner(ctx: ToolContext, db: sqlite3.Connection, agent: AgentDef) -> str:
    """A note when another place replaces the agent just saved, in this project."""
    winner = load_agents(ctx.root, db).get(agent.name)
    if winner is None or winner.source == agent.source:
        return ""
    return f" Note: in this project '{agent.name}' comes from {winner.source} " \
        f"({winner.path or 'the store'}), which replaces the saved one."


def _not_saved(ctx: ToolContext, db: sqlite3.Connection, name: str, label: str) -> str:
    agent = load_agents(ctx.root, db).get(name)
    if agent is not None and agent.source in ("builtin", "file"):
        return (f"'{name}' is a {'built-in agent' if agent.source == 'builtin' else 'file'} "
                f"agent and cannot be changed here; save a new one with agent_create.")
    other = "global" if label == "for this project" else "project"
    return f"There is no agent named '{name}' saved {label} (try scope: {other})."
