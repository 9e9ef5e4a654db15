from __future__ import annotations

import asyncio
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import gone, group_members, wait_until
from tests.support.tool_calls import MakeContext, answering
from totem.policy.permission import PermissionDenied, Rule
from totem.tools.base import Tool, ToolContext, ToolError, ToolResult, ToolSettings, parse_arguments
from totem.tools.process import ProcessManager, ProcessTool

PY = shlex.quote(sys.executable)
COUNTER = PY + " -c 'import time\nfor i in range(100000):\n print(i, flush=True); time.sleep(0.02)'"


async def act(ctx: ToolContext, **arguments: Any) -> ToolResult:
    tool: Tool = ProcessTool()
    ctx.tool_name = tool.name
    return await tool.run(parse_arguments(tool, arguments), ctx)


def numbers(text: str) -> list[int]:
    return [int(line) for line in text.splitlines() if re.fullmatch(r"\d+", line)]


def test_start_read_incrementally_list_and_stop(ctx: ToolContext) -> None:
    async def scenario() -> int:
        started = await act(ctx, action="start", command=COUNTER)
        assert started.output.startswith("Started p1 (pid ")
        assert "running. Read its output with action 'output', id 'p1'." in started.output
        await asyncio.sleep(0.3)
        first = await act(ctx, action="output", id="p1")
        await asyncio.sleep(0.3)
        second = await act(ctx, action="output", id="p1")
        seen = numbers(started.output) + numbers(first.output)
        assert numbers(second.output)[0] == seen[-1] + 1  # nothing read twice, nothing lost
        assert seen == list(range(len(seen))) and len(seen) > 3
        assert first.output.endswith("[p1 running]")
        listing = (await act(ctx, action="list")).output
        assert re.fullmatch(r"p1  running  \ds  .*python.* -c 'import time for i in .*", listing)
        pgid = ctx.state.service(ProcessManager).get("p1").pid
        assert group_members(pgid)
        stopped = await act(ctx, action="stop", id="p1")
        assert stopped.output.endswith("[p1 stopped]")
        assert (await act(ctx, action="list")).output.startswith("p1  stopped  ")
        return pgid

    pgid = asyncio.run(scenario())
    assert group_members(pgid) == []


def test_stop_kills_the_whole_group(project: Path, ctx: ToolContext) -> None:
    line = "sleep 100 & sleep 100 & " + COUNTER + " & echo spawned; wait"

    async def scenario() -> tuple[int, list[int]]:
        started = await act(ctx, action="start", command=line)
        assert "spawned" in started.output
        manager = ctx.state.service(ProcessManager)
        pgid = manager.get("p1").pid
        while len(group_members(pgid)) < 4:  # the shell, two sleeps and python
            await asyncio.sleep(0.02)
        members = group_members(pgid)
        result = await act(ctx, action="stop", id="p1")
        assert result.output.endswith("[p1 stopped]")
        return pgid, members

    pgid, members = asyncio.run(scenario())
    assert wait_until(lambda: group_members(pgid) == [])
    assert len(members) >= 4 and all(gone(pid) for pid in members)


def test_aclose_kills_every_leftover(ctx: ToolContext) -> None:
    async def scenario() -> list[int]:
        await act(ctx, action="start", command=COUNTER)
        await act(ctx, action="start", command="sleep 100 & sleep 100; echo never")
        await act(ctx, action="start", command="echo quick")
        manager = ctx.state.service(ProcessManager)
        groups = [p.pid for p in manager.processes.values()]
        await ctx.state.aclose()
        assert ctx.state.existing(ProcessManager) is None
        return groups

    groups = asyncio.run(scenario())
    assert all(group_members(pgid) == [] for pgid in groups)


def test_a_command_that_ends_at_once(ctx: ToolContext) -> None:
    async def scenario() -> None:
        result = await act(ctx, action="start", command="echo done; exit 3")
        pid = ctx.state.service(ProcessManager).get("p1").pid
        assert result.output == f"Started p1 (pid {pid}): exited with code 3.\ndone"
        assert (await act(ctx, action="output", id="p1")).output == (
            "(no new output)\n\n[p1 exited with code 3]"
        )
        await ctx.state.aclose()

    asyncio.run(scenario())


def test_output_is_bounded(make_ctx: MakeContext) -> None:
    ctx = make_ctx(settings=ToolSettings(output_limit=1000))
    command = PY + ' -c \'import time; time.sleep(0.5); print("x" * 3_000_000); print("end")\''

    async def scenario() -> None:
        started = await act(ctx, action="start", command=command)
        assert started.output.endswith(
            ": running. Read its output with action 'output', id 'p1'.\n(no new output)"
        )
        await asyncio.sleep(1)
        result = await act(ctx, action="output", id="p1")
        assert re.match(
            r"\[\.\.\. \d+ earlier bytes skipped; showing the latest \.\.\.\]\nx+", result.output
        )
        assert result.output.endswith("x\nend\n\n[p1 exited with code 0]")
        assert len(result.output) < 1200
        await ctx.state.aclose()

    asyncio.run(scenario())


def test_errors_for_the_model(ctx: ToolContext) -> None:
    async def scenario() -> None:
        assert (await act(ctx, action="list")).output == "No background processes."
        with pytest.raises(ToolError, match="needs the id"):
            await act(ctx, action="output")
        with pytest.raises(ToolError, match="No process 'p9' \\(known: none started yet\\)"):
            await act(ctx, action="stop", id="p9")
        with pytest.raises(ToolError, match="start needs a command"):
            await act(ctx, action="start")
        with pytest.raises(ToolError, match="action"):
            await act(ctx, action="restart")

    asyncio.run(scenario())


def test_forbidden_commands_are_refused(project: Path, make_ctx: MakeContext) -> None:
    ctx = make_ctx(settings=ToolSettings(forbidden_commands=["git push *"]))

    async def scenario() -> None:
        with pytest.raises(ToolError, match="git push.*forbid"):
            await act(ctx, action="start", command="touch made && timeout 5 git push origin")
        assert ctx.state.service(ProcessManager).processes == {}

    asyncio.run(scenario())
    assert not (project / "made").exists()


def test_permission_as_bash(project: Path, make_ctx: MakeContext) -> None:
    ctx = make_ctx(mode="headless", rules=[Rule("bash", "echo *", "allow")])

    async def scenario() -> None:
        assert "exited with code 0" in (await act(ctx, action="start", command="echo a")).output
        with pytest.raises(PermissionDenied):
            await act(ctx, action="start", command="echo a && touch no.txt")
        await ctx.state.aclose()

    asyncio.run(scenario())
    assert not (project / "no.txt").exists()

    interactive = make_ctx()
    asked = answering(interactive, "always")

    async def ask() -> None:
        await act(interactive, action="start", command="sleep 1 | wc -l")
        await interactive.state.aclose()

    asyncio.run(ask())
    assert [(a.permission, a.patterns) for a in asked] == [("bash", ["sleep 1", "wc -l"])]
    assert interactive.permission.action_for("bash", "sleep 5") == "allow"
