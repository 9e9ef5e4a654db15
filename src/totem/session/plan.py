"""Plan mode in a session: the plan read from a plan-mode answer, and what approving it
starts (the session goes on in the default mode, the plan as its task list)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from functools import cache
from pathlib import Path

from totem.events import Event, PlanProposed, RunFinished
from totem.policy.modes import plan_tools
from totem.run.agent import Preparer, Refresher, ToolChange
from totem.store.base import Store
from totem.tools.base import Tool

__all__ = ["approved_text", "in_plan_mode", "plan_prompt", "plan_steps", "with_plan"]

_STEP = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(?:\[[ xX]\]\s+)?(.+?)\s*$")


@cache
def plan_prompt() -> str:
    """What a plan-mode run's system prompt adds (prompt/plan.txt)."""
    return (Path(__file__).parents[1] / "prompt" / "plan.txt").read_text(encoding="utf-8")


def plan_steps(text: str) -> list[str]:
    """The steps of a plan: its numbered or bulleted lines; the whole text as one step when
    it has none (nothing for an empty answer)."""
    steps = [found.group(1) for line in text.splitlines() if (found := _STEP.match(line))]
    if steps:
        return steps
    return [text.strip()] if text.strip() else []


def _preparer(prepare: Preparer) -> Preparer:
    async def prepared(asks: Callable[[Event], None]) -> list[Tool]:
        return plan_tools(await prepare(asks))

    return prepared


def _refresher(refresh: Refresher) -> Refresher:
    async def refreshed() -> ToolChange | None:
        change = await refresh()
        return None if change is None else ToolChange(change.removed, plan_tools(change.added))

    return refreshed


def in_plan_mode(preparers: list[Preparer], refreshers: list[Refresher]) -> tuple[
        list[Preparer], list[Refresher]]:
    """The tools that come with a plan-mode run (an MCP server's, a knowledge pack's) held
    to plan mode too: those that are not reading ones refuse, and are not offered."""
    return [_preparer(p) for p in preparers], [_refresher(r) for r in refreshers]


def approved_text(steps: list[str]) -> str:
    """The request that carries out an approved plan."""
    listed = "\n".join(f"{i}. {step}" for i, step in enumerate(steps, 1))
    return ("The plan is approved. Carry it out now, step by step, keeping the todo list "
            f"current as each step is done:\n\n{listed}")


async def with_plan(events: AsyncIterator[Event], *, store: Store,
                    session_id: str) -> AsyncIterator[Event]:
    """A plan-mode run's events, with its plan (`PlanProposed`) before its end when it
    answered."""
    async for event in events:
        if isinstance(event, RunFinished) and event.reason == "finished":
            answers = [m for m in store.messages(session_id) if m.role == "assistant"]
            text = answers[-1].text().strip() if answers else ""
            if text:
                yield PlanProposed(text, plan_steps(text))
        yield event
