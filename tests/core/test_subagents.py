"""Sub-agents through the task tool, driven by the function provider shipped in the package."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from tests.support.loop_agents import EchoTool, make_agent
from totem.abort import Aborted, AbortSignal
from totem.events import AgentEvent, Event, RunFinished, RunStarted, TextDelta, ToolEnd
from totem.messages import ToolPart
from totem.providers.base import ModelRequest
from totem.run.loop import Agent, run_events
from totem.run.subagents import SubagentRunner
from totem.testing.scripted import FunctionProvider, Turn, call, reply
from totem.tools.base import ToolContext, ToolResult
from totem.tools.bash import Bash
from totem.tools.task import Task


@dataclass(frozen=True)
class Def:
    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None
    max_steps: int | None = None
    model: str | None = None


DEFS = {
    "explore": Def("explore", "reads only", "You are EXPLORE.", tools=("echo",)),
    "worker": Def("worker", "runs commands", "You are WORKER.", tools=("bash",)),
    "fancy": Def("fancy", "wants another model", "You are FANCY.", model="nowhere/big"),
}


def with_task(agent: Agent) -> Agent:
    holder: list[Agent] = []

    def unavailable(spec: str) -> Agent:
        raise LookupError(f"no provider for {spec}")

    runner = SubagentRunner(
        parent=lambda: holder[0],
        make_agent=unavailable,
        definitions=lambda: dict(DEFS),
        system_for=lambda d: d.prompt,
    )
    task = Task(runner, {n: d.description for n, d in DEFS.items()})
    full = dataclasses.replace(agent, tools=[*agent.tools, task])
    holder.append(full)
    return full


def collect(agent: Agent, text: str, abort: AbortSignal | None = None,
            on_event: object = None) -> list[Event]:
    sid = agent.store.create_session(project=str(agent.root), model=agent.label).id
    signal = abort or AbortSignal()

    async def go() -> list[Event]:
        seen: list[Event] = []
        async for event in run_events(agent, sid, text, abort=signal):
            seen.append(event)
            if callable(on_event):
                on_event(event, signal)
        return seen

    return asyncio.run(go())


def test_four_tasks_three_at_once_and_only_the_answer_returns(tmp_path: Path) -> None:
    def model(request: ModelRequest, index: int) -> Turn:
        if request.system.startswith("You are EXPLORE."):
            task = request.messages[0].parts[0]
            return reply(f"found {getattr(task, 'text', '')[-1]}", chunk=1)
        if index == 0:
            return call(*[("task", {"agent": "explore", "prompt": f"look {i}"}) for i in range(4)])
        return reply("all done")

    agent = with_task(make_agent(tmp_path, FunctionProvider(model, delay=0.01)))
    events = collect(agent, "explore four things")
    threads = [e for e in events if isinstance(e, AgentEvent)]
    order = [e.call_id for e in threads if isinstance(e.event, TextDelta)]
    switches = sum(1 for a, b in zip(order, order[1:], strict=False) if a != b)
    assert switches >= 3, "the sub-agents' streams should interleave"
    lifecycle = [(e.call_id, type(e.event).__name__) for e in threads
                 if isinstance(e.event, RunStarted | RunFinished)]
    started = [c for c, kind in lifecycle if kind == "RunStarted"]
    first_end = next(i for i, (_, kind) in enumerate(lifecycle) if kind == "RunFinished")
    assert len(started) == 4
    assert [kind for _, kind in lifecycle[:first_end]].count("RunStarted") == 3
    results = sorted(e.output for e in events if isinstance(e, ToolEnd))
    assert results == ["found 0", "found 1", "found 2", "found 3"]
    final = events[-1]
    assert isinstance(final, RunFinished) and final.reason == "finished"
    parts = [p for m in agent.store.messages(_root(agent)) for p in m.parts
             if isinstance(p, ToolPart)]
    assert all(p.meta and p.meta["agent"] == "explore" for p in parts)
    child = agent.store.get_session(parts[0].meta["session_id"] if parts[0].meta else "")
    assert child is not None and child.parent_id == _root(agent)


def _root(agent: Agent) -> str:
    for info in agent.store.list_sessions(str(agent.root), limit=100):
        if info.parent_id is None:
            return info.id
    raise AssertionError("no parent session")


def test_sub_agents_cannot_start_agents_and_keep_to_their_tools(tmp_path: Path) -> None:
    seen_tools: list[list[str]] = []

    def model(request: ModelRequest, index: int) -> Turn:
        if request.system.startswith("You are EXPLORE."):
            seen_tools.append([t.name for t in request.tools])
            return reply("ok")
        return call(("task", {"agent": "explore", "prompt": "x"})) if index == 0 else reply("k")

    agent = with_task(make_agent(tmp_path, FunctionProvider(model)))
    collect(agent, "go")
    assert seen_tools == [["echo"]]


def test_unavailable_model_falls_back_and_the_thread_says_so(tmp_path: Path) -> None:
    def model(request: ModelRequest, index: int) -> Turn:
        if request.system.startswith("You are FANCY."):
            return reply("fancy answer")
        return call(("task", {"agent": "fancy", "prompt": "x"})) if index == 0 else reply("k")

    agent = with_task(make_agent(tmp_path, FunctionProvider(model)))
    events = collect(agent, "go")
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert "not available" in end.output and "fancy answer" in end.output
    part = next(p for m in agent.store.messages(_root(agent)) for p in m.parts
                if isinstance(p, ToolPart))
    assert part.meta is not None and "nowhere/big" in part.meta["note"]


def test_unknown_agent_is_a_tool_error(tmp_path: Path) -> None:
    def model(request: ModelRequest, index: int) -> Turn:
        return call(("task", {"agent": "nobody", "prompt": "x"})) if index == 0 else reply("k")

    agent = with_task(make_agent(tmp_path, FunctionProvider(model)))
    end = next(e for e in collect(agent, "go") if isinstance(e, ToolEnd))
    assert end.is_error and "no agent named 'nobody'" in end.output and "explore" in end.output


def _sleepers(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if cmd.startswith(b"sleep\x00") and marker.encode() in cmd:
                found.append(int(pid))
    return found


def test_abort_during_sub_agents_leaves_no_process_and_no_running_agent(tmp_path: Path) -> None:
    marker = f"{100 + (time.time_ns() % 1000) / 1000:.3f}"

    def model(request: ModelRequest, index: int) -> Turn:
        if request.system.startswith("You are WORKER."):
            return call(("bash", {"command": f"sleep {marker}"}))
        if index == 0:
            return call(*[("task", {"agent": "worker", "prompt": f"job {i}"}) for i in range(3)])
        return reply("never")

    base = make_agent(tmp_path, FunctionProvider(model), tools=[EchoTool(), Bash()])
    agent = with_task(base)
    started = 0

    def watch(event: Event, signal: AbortSignal) -> None:
        nonlocal started
        if isinstance(event, AgentEvent) and type(event.event).__name__ == "ToolStart":
            started += 1
            if started == 3:
                asyncio.get_running_loop().call_later(0.5, signal.abort)

    events = collect(agent, "work", on_event=watch)
    final = events[-1]
    assert isinstance(final, RunFinished) and final.reason == "aborted"
    time.sleep(0.2)
    assert _sleepers(marker) == []
    for info in agent.store.list_sessions(str(agent.root), limit=100):
        for message in agent.store.messages(info.id):
            for part in message.parts:
                if isinstance(part, ToolPart):
                    assert part.state in ("completed", "error"), (info.title, part)


@dataclass
class Trip:
    """A read-only tool that aborts the run and raises at once, as a tool that sees the abort
    first does: its exception reaches the group before the run's own cancellation."""

    name = "trip"
    description = "Abort."
    read_only = True

    class Input(BaseModel):
        pass

    async def run(self, args: Input, ctx: ToolContext) -> ToolResult:
        asyncio.get_running_loop().call_soon(ctx.abort.abort, "stop")
        raise Aborted("stop")


@dataclass
class Slow:
    """A read-only tool that only ends when it is cancelled; says so in `ended`."""

    ended: list[str]
    name = "slow"
    description = "Wait."
    read_only = True

    class Input(BaseModel):
        pass

    async def run(self, args: Input, ctx: ToolContext) -> ToolResult:
        try:
            await asyncio.sleep(30)
        finally:
            self.ended.append("slow")
        return ToolResult("late")


def test_a_call_that_aborts_ends_its_siblings_before_the_run_finishes(tmp_path: Path) -> None:
    ended: list[str] = []

    def model(request: ModelRequest, index: int) -> Turn:
        return call(("slow", {}), ("trip", {})) if index == 0 else reply("never")

    agent = make_agent(tmp_path, FunctionProvider(model), tools=[Slow(ended), Trip()])
    seen_at_finish: list[list[str]] = []

    def watch(event: Event, signal: AbortSignal) -> None:
        if isinstance(event, RunFinished):
            seen_at_finish.append(list(ended))

    events = collect(agent, "go", on_event=watch)
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "aborted"
    assert seen_at_finish == [["slow"]], "the slow call was still running when the run ended"
    slow_end = [e for e in events if isinstance(e, ToolEnd) and e.name == "slow"]
    assert len(slow_end) == 1 and slow_end[0].is_error
