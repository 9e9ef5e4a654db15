"""Servers that stop and servers that change: a server killed mid-session is started again
on next use (the model told once, in that call's result), one that keeps failing is
disabled with a notice, and a server's `tools/list_changed` reaches the model between
steps of a real run."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

from tests.support.loop_agents import make_agent
from tests.support.mcp_servers import (
    CALL,
    EVERYTHING,
    PYSERVER,
    STARTUP,
    Person,
    by_name,
    new_mark,
    node,
    python_server,
)
from tests.support.ports import free_port, port_open
from tests.support.processes import processes_with, running
from totem.abort import AbortSignal
from totem.events import Notice, PermissionAsked, RunFinished, ToolEnd
from totem.mcp.config import HttpServer
from totem.mcp.manager import McpManager
from totem.policy.questions import QuestionService
from totem.run.loop import run_events
from totem.session.toolset import Toolset
from totem.settings.config import Config
from totem.testing.scripted import ScriptedProvider, call, reply
from totem.tools.base import ToolError


def notices(person: Person) -> list[str]:
    return [n.text for n in person.of(Notice)]


def pid_of(output: str) -> int:
    found = re.search(r'"pid": "(\d+)"', output)
    assert found is not None, output
    return int(found.group(1))


async def until_closed(manager: McpManager) -> None:
    """Wait until the client has read the end of the killed server's output."""
    for _ in range(400):
        if manager.connections["py"].exited():
            return
        await asyncio.sleep(0.025)
    raise AssertionError("the connection never saw the server exit")


def kill(mark: str) -> list[int]:
    pids = processes_with(mark)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return pids


def test_a_server_killed_mid_session_is_started_again_on_next_use(tmp_path: Path) -> None:
    person = Person(tmp_path)
    mark = new_mark()

    async def main() -> None:
        async with McpManager(tmp_path, {"py": python_server(mark)},
                              permission=person.permission, log_dir=tmp_path / "logs") as manager:
            tools = by_name(manager.tools)
            first = pid_of((await person.call(tools["py__whoami"])).output)
            assert kill(mark) == [first]
            await until_closed(manager)
            result = await person.call(tools["py__add"], a=2, b=3)
            note, answer = result.output.split("\n", 1)
            assert note.startswith("[The MCP server 'py' had stopped (it exited) and was started")
            assert "anything it kept from earlier calls may be gone" in note
            assert answer.startswith("5")
            again = (await person.call(tools["py__whoami"])).output
            assert "had stopped" not in again  # told once, not again
            assert pid_of(again) != first and processes_with(mark) == [pid_of(again)]
            assert manager.status()[0].state == "ready"
            assert not await manager.refresh()  # the same tools: nothing to tell the model

    asyncio.run(main())
    assert any("'py' had stopped (it exited); it was started again" in n for n in notices(person))
    assert len(person.of(PermissionAsked)) == 1 + 3  # started once (asked), three calls
    assert processes_with(mark) == []


def test_a_server_that_keeps_failing_is_disabled_with_a_notice(tmp_path: Path) -> None:
    person = Person(tmp_path)
    mark = new_mark()

    async def main() -> None:
        async with McpManager(tmp_path, {"py": python_server(mark)},
                              permission=person.permission, log_dir=tmp_path / "logs") as manager:
            tools = by_name(manager.tools)
            errors: list[str] = []
            for _ in range(4):
                try:
                    await person.call(tools["py__crash"])
                except ToolError as exc:
                    errors.append(str(exc))
            assert "stopped while crash was running; it is started again when" in errors[0]
            assert "stopped while crash was running" in errors[1]  # after a restart
            assert "is disabled for the rest of this session (it stopped 3 times" in errors[3]
            assert manager.status()[0].state == "disabled"
            assert await manager.refresh() and manager.tools == []  # gone from the next step
            try:
                await person.call(tools["py__add"], a=1, b=1)
            except ToolError as exc:
                assert "is disabled" in str(exc)
            else:
                raise AssertionError("a disabled server's tools must not run")

    asyncio.run(main())
    assert any("'py' kept failing" in n and "disabled" in n for n in notices(person))
    assert processes_with(mark) == []


def test_a_changed_tool_list_reaches_the_model_between_steps(tmp_path: Path) -> None:
    mark = new_mark()
    turns = [call(("py__grow", {})), call(("py__shout", {"text": "hi"})),
             call(("py__shrink", {})), reply("done")]
    provider = ScriptedProvider(turns)
    agent = make_agent(tmp_path, provider, tools=[])
    server = {"command": sys.executable, "args": [str(PYSERVER)],
              "env": {"TOTEM_TEST_MARK": mark}}
    (agent.root / ".totem").mkdir()
    (agent.root / ".totem" / "mcp.json").write_text(json.dumps({"mcpServers": {"py": server}}))
    toolset = Toolset(agent.root, Config(), permission=agent.permission,
                      questions=QuestionService(interactive=False), given=[], trusted=True)
    agent.preparers.append(functools.partial(toolset.mcp_tools, agent))
    agent.refreshers.append(toolset.mcp_changes)

    async def main() -> list[object]:
        session = agent.store.create_session(project=str(agent.root), model=agent.label).id
        try:
            return [e async for e in run_events(agent, session, "go", abort=AbortSignal())]
        finally:
            await toolset.aclose()

    events = asyncio.run(main())
    offered = [{s.name for s in request.tools} for request in provider.requests]
    assert "py__shout" not in offered[0] and "py__grow" in offered[0]
    assert "py__shout" in offered[1]  # listed after the server said its list changed
    assert "py__shout" not in offered[3]  # and gone again after shrink
    shout = [e for e in events if isinstance(e, ToolEnd) and e.name == "py__shout"][0]
    assert not shout.is_error and shout.output.startswith("HI")
    texts = [e.text for e in events if isinstance(e, Notice)]
    assert "The tools changed (new: py__shout)." in texts
    assert "The tools changed (gone: py__shout)." in texts
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "finished"
    assert processes_with(mark) == []


def test_an_http_server_that_went_away_is_connected_again(tmp_path: Path) -> None:
    person = Person(tmp_path)
    port = free_port()
    command = [node(), str(EVERYTHING), "streamableHttp"]

    def serving(n: int) -> Any:
        return running(command, log=tmp_path / f"web-{n}.log", ready=lambda: port_open(port),
                       what="server-everything (HTTP)", timeout=STARTUP,
                       env={**os.environ, "PORT": str(port)})

    async def main() -> None:
        config = HttpServer("web", f"http://127.0.0.1:{port}/mcp", timeout=CALL,
                            startup_timeout=STARTUP)
        with serving(1):
            manager = McpManager(tmp_path, {"web": config}, permission=person.permission,
                                 log_dir=tmp_path / "logs")
            await manager.start()
            echo = by_name(manager.tools)["web__echo"]
            assert (await person.call(echo, message="a")).output == "Echo: a"
        try:  # the server is gone now
            await person.call(echo, message="b")
        except ToolError as exc:
            assert "connected again when one of its tools is used next" in str(exc)
        else:
            raise AssertionError("a call to a server that went away must fail")
        with serving(2):
            output = (await person.call(echo, message="c")).output
            await manager.aclose()
        assert output.startswith("[The MCP server 'web' had stopped (it stopped while echo")
        assert "was connected again for this call" in output and output.endswith("Echo: c")

    asyncio.run(main())
