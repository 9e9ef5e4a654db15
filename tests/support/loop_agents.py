"""Shared helpers for loop tests: a real store, a real permission service, scripted models."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from totem.abort import AbortSignal
from totem.events import Event
from totem.policy.permission import Mode, PermissionService, Rule
from totem.providers.base import Provider
from totem.providers.catalog.profiles import profile_for
from totem.run.assist import AssistedRun, AssistFactory, RunAssist
from totem.run.loop import Agent, run_events
from totem.smallmodel.assist import SmallModelAssist
from totem.store.sqlite import SqliteStore
from totem.tools.base import Tool, ToolContext, ToolResult


class EchoTool:
    """A tiny read-only tool defined by the test: returns its text."""

    name: ClassVar[str] = "echo"
    description: ClassVar[str] = "Echo a text."
    read_only: ClassVar[bool] = True

    class Input(BaseModel):
        text: str = Field(description="what to echo")
        times: int = 1

    async def run(self, args: Input, ctx: ToolContext) -> ToolResult:
        return ToolResult(args.text * args.times)


class GuardedTool:
    """A tool that asks permission (as a write would) before acting."""

    name: ClassVar[str] = "poke"
    description: ClassVar[str] = "Poke something."
    read_only: ClassVar[bool] = False

    class Input(BaseModel):
        target: str

    async def run(self, args: Input, ctx: ToolContext) -> ToolResult:
        await ctx.ask("poke", [args.target], title=f"poke {args.target}")
        return ToolResult(f"poked {args.target}")


def make_agent(
    tmp: Path,
    provider: Provider,
    *,
    tools: Sequence[Tool] | None = None,
    model: str = "test-model",
    mode: Mode = "yes",
    rules: Sequence[Rule] = (),
    max_steps: int = 50,
    store: SqliteStore | None = None,
    look_ahead: bool = False,
) -> Agent:
    store = store or SqliteStore(tmp / "store.db")
    profile = profile_for(model)
    root = tmp / "project"
    root.mkdir(exist_ok=True)
    permission = PermissionService(rules=rules, mode=mode, project=str(root), memory=store)
    return Agent(
        provider=provider,
        model=model,
        label=f"test/{model}",
        profile=profile,
        tools=list(tools) if tools is not None else [EchoTool(), GuardedTool()],
        store=store,
        root=root,
        permission=permission,
        system="You are a test.",
        max_steps=max_steps,
        # as the session gives it (session/service.py), without looking ahead
        assist=small_assist(look_ahead=look_ahead) if profile.small else None,
    )


def small_assist(*, look_ahead: bool) -> AssistFactory:
    def make(run: AssistedRun) -> RunAssist:
        return SmallModelAssist(run, look_ahead=look_ahead)

    return make


def run_once(agent: Agent, text: str, session_id: str | None = None) -> tuple[str, list[Event]]:
    if session_id is None:
        session_id = agent.store.create_session(project=str(agent.root), model=agent.label).id

    async def go() -> list[Event]:
        return [e async for e in run_events(agent, session_id, text, abort=AbortSignal())]

    return session_id, asyncio.run(go())
