"""Sub-agents: the `task` tool starts a nested run with a fresh context.

The nested run has its own session (a child of the conversation's, so its thread is kept and
can be shown), the agent's own tools, step limit, prompt and model, and the same permission
service: its questions reach the person like any other. Only its final answer comes back as
the tool's result. Sub-agents cannot start agents and get no MCP tools; at most three run at
once per session; an abort stops them all (they share the run's abort signal).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Protocol

from totem.abort import Aborted
from totem.events import AgentEvent, Event, PermissionAsked, QuestionAsked
from totem.messages import TextPart
from totem.run.agent import Agent
from totem.run.loop import Run
from totem.tools.base import ToolContext, ToolError, ToolResult, kind_of

__all__ = ["AgentSlots", "SubagentDefinition", "SubagentRunner", "describe"]

MAX_AT_ONCE = 3


class SubagentDefinition(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def tools(self) -> tuple[str, ...] | None: ...

    @property
    def max_steps(self) -> int | None: ...

    @property
    def model(self) -> str | None: ...

    @property
    def prompt(self) -> str: ...


def describe(agents: dict[str, str]) -> str:
    """The task tool's description: what it does and which agents there are."""
    listing = "; ".join(f"{name}: {text}" for name, text in sorted(agents.items()))
    return (
        "Start a sub-agent with a fresh context for a self-contained task; only its final "
        f"answer comes back. Agents: {listing}."
    )


class AgentSlots:
    """At most three sub-agents of a session run at once; the others wait their turn."""

    def __init__(self) -> None:
        self.semaphore = asyncio.Semaphore(MAX_AT_ONCE)


class ModelUnavailable(Exception):
    pass


class SubagentRunner:
    def __init__(
        self,
        *,
        parent: Callable[[], Agent],
        make_agent: Callable[[str], Agent],
        definitions: Callable[[], dict[str, SubagentDefinition]],
        system_for: Callable[[SubagentDefinition], str],
    ) -> None:
        self.parent = parent  # the conversation's agent, as the run uses it
        self.make_agent = make_agent  # an Agent for "provider/model"; raises when unavailable
        self.definitions = definitions
        self.system_for = system_for

    def _child(self, definition: SubagentDefinition, ctx: ToolContext) -> tuple[Agent, str]:
        parent = self.parent()
        note = ""
        agent = parent
        if definition.model and definition.model != parent.label:
            try:
                agent = self.make_agent(definition.model)
            except Exception as exc:  # not configured, no key, unknown provider...
                note = (
                    f"The model {definition.model} is not available ({exc}); "
                    f"using the conversation's model {parent.label}."
                )
        allowed = set(definition.tools) if definition.tools is not None else None
        tools = [
            t for t in parent.tools
            if kind_of(t) not in ("task", "mcp")  # no nesting, no MCP tools
            and (allowed is None or t.name in allowed)
        ]
        child = dataclasses.replace(
            agent,
            tools=tools,
            specs=None,
            system=self.system_for(definition),
            max_steps=definition.max_steps or parent.max_steps,
        )
        return child, note

    async def run(self, agent_name: str, prompt: str, ctx: ToolContext) -> ToolResult:
        definitions = self.definitions()
        definition = definitions.get(agent_name)
        if definition is None:
            known = ", ".join(sorted(definitions)) or "none"
            raise ToolError(f"There is no agent named '{agent_name}'. Agents: {known}.")
        child, note = self._child(definition, ctx)
        session = child.store.create_session(
            project=str(child.root),
            model=child.label,
            title=f"{agent_name}: {prompt.strip()[:60]}",
            parent_id=ctx.session_id,
        )
        ctx.meta.update(session_id=session.id, agent=agent_name, model=child.label)
        if note:
            ctx.meta["note"] = note
        parent_emit = ctx.emit or (lambda _event: None)

        def relay(event: Event) -> None:
            if isinstance(event, PermissionAsked | QuestionAsked):
                parent_emit(event)  # asked in the session's own stream, answered as usual
            else:
                parent_emit(AgentEvent(ctx.call_id, agent_name, child.label, event))

        async with ctx.state.service(AgentSlots).semaphore:
            ctx.abort.check()
            run = Run(child, session.id, emit=relay, abort=ctx.abort, nested=True,
                      asks=ctx.asks or parent_emit)
            finished = await run(prompt)
        if finished.reason == "aborted":
            raise Aborted(finished.detail)
        if finished.reason == "error":
            raise ToolError(f"The {agent_name} agent failed: {finished.detail}")
        answer = _last_answer(run)
        if finished.reason != "finished":
            answer += f"\n\n[The {agent_name} agent stopped early: {finished.detail}]"
        if note:
            answer = f"[{note}]\n\n{answer}"
        return ToolResult(answer, title=f"{agent_name} · {child.label}")


def _last_answer(run: Run) -> str:
    for message in reversed(run.history):
        if message.role == "assistant":
            text = "".join(p.text for p in message.parts if isinstance(p, TextPart)).strip()
            if text:
                return text
    return "(the agent gave no answer)"
