"""MCP tools in the real loop, driven by a scripted model: a call and its result, a server
killed in the middle of a call (a tool error; the next call starts it again), and a large tool list
offered by name with its schemas loaded on demand."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from tests.support.loop_agents import make_agent
from tests.support.mcp_servers import everything_stdio, new_mark
from tests.support.processes import processes_with
from totem.abort import AbortSignal
from totem.events import Event, Notice, RunFinished, ToolEnd, ToolProgress
from totem.mcp.manager import McpManager, is_mcp_tool
from totem.mcp.offer import SCHEMA_TOOL
from totem.run.agent import ToolChange
from totem.run.loop import Agent, run_events
from totem.testing.scripted import ScriptedProvider, Turn, call, reply


async def run_with_everything(
    tmp: Path,
    turns: list[Turn],
    *,
    mark: str,
    window: int | None = None,
    kill_on_progress: bool = False,
) -> tuple[Agent, ScriptedProvider, list[Event]]:
    provider = ScriptedProvider(turns)
    agent = make_agent(tmp, provider, tools=[])
    manager = McpManager(
        agent.root,
        {"everything": everything_stdio(mark)},
        permission=agent.permission,
        context_window=window,
        log_dir=tmp / "logs",
    )

    async def changes() -> ToolChange | None:  # what the session's toolset does between steps
        before = frozenset(t.name for t in manager.tools)
        return ToolChange(before, list(manager.tools)) if await manager.refresh() else None

    events: list[Event] = []
    async with manager:
        agent.tools = list(manager.tools)
        agent.specs = manager.specs()
        agent.refreshers.append(changes)
        assert all(is_mcp_tool(t) or t.name == SCHEMA_TOOL for t in agent.tools)
        session = agent.store.create_session(project=str(agent.root), model=agent.label).id
        async for event in run_events(agent, session, "go", abort=AbortSignal()):
            events.append(event)
            if kill_on_progress and isinstance(event, ToolProgress) and processes_with(mark):
                for pid in processes_with(mark):
                    os.kill(pid, signal.SIGKILL)
    return agent, provider, events


def ends(events: list[Event]) -> list[ToolEnd]:
    return [e for e in events if isinstance(e, ToolEnd)]


def test_the_model_calls_an_mcp_tool_and_gets_its_result(tmp_path: Path) -> None:
    turns: list[Turn] = [call(("everything__echo", {"message": "hi"})), reply("It said hi.")]
    mark = new_mark()
    _, provider, events = asyncio.run(run_with_everything(tmp_path, turns, mark=mark))
    end = ends(events)[0]
    assert (end.name, end.output, end.is_error) == ("everything__echo", "Echo: hi", False)
    spec = next(s for s in provider.requests[0].tools if s.name == "everything__echo")
    assert spec.parameters["properties"]["message"] == {
        "type": "string",
        "description": "Message to echo",
    }
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "finished"
    assert processes_with(mark) == []


def test_a_server_killed_mid_call_is_a_tool_error_and_restarts_next(tmp_path: Path) -> None:
    turns: list[Turn] = [
        call(("everything__trigger-long-running-operation", {"duration": 20, "steps": 40})),
        call(("everything__echo", {"message": "still there?"})),
        reply("The server was restarted."),
    ]
    mark = new_mark()
    _, provider, events = asyncio.run(
        run_with_everything(tmp_path, turns, mark=mark, kill_on_progress=True)
    )
    first, second = ends(events)
    assert first.is_error and "The MCP server 'everything' stopped while" in first.output
    assert not second.is_error and "Echo: still there?" in second.output
    assert "[The MCP server 'everything' had stopped" in second.output  # the model is told
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.reason == "finished"
    assert len(provider.requests) == 3  # the model saw both errors and answered
    assert processes_with(mark) == []


def test_a_large_tool_list_is_offered_by_name_and_loaded_on_demand(tmp_path: Path) -> None:
    turns: list[Turn] = [
        call((SCHEMA_TOOL, {"names": ["everything__get-sum"]})),
        call(("everything__get-sum", {"a": 2, "b": 3})),
        call(("everything__get-sum", {"a": "two"})),
        reply("5"),
    ]
    _, provider, events = asyncio.run(
        run_with_everything(tmp_path, turns, mark=new_mark(), window=2000)
    )
    first = {s.name: s for s in provider.requests[0].tools}
    assert set(first) == {SCHEMA_TOOL}  # every tool listed in its description instead
    listing = first[SCHEMA_TOOL].description
    assert "- everything__get-sum: " in listing and "- everything__echo: " in listing
    assert len(listing) < 4 * 1000  # one line each: well under the 8k window's share
    later = {s.name: s for s in provider.requests[1].tools}
    assert later["everything__get-sum"].parameters["properties"]["a"]["type"] == "number"
    assert "- everything__get-sum: " not in later[SCHEMA_TOOL].description
    schema, total, wrong = ends(events)
    assert '"a":{"type":"number"' in schema.output.replace(" ", "")
    assert "From your next step on, you can call: everything__get-sum." in schema.output
    assert not total.is_error and "5" in total.output
    assert wrong.is_error and "Its parameters (JSON schema)" in wrong.output
    assert any(isinstance(e, Notice) and e.text == "The tools changed (new: everything__get-sum)."
               for e in events)
