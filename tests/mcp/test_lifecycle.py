"""Asked before they start, stopped when done, and never the end of a run: refusals, rules,
servers that fail to start or offer unusable schemas, pipes and processes after close."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from tests.support.mcp_servers import (
    RAWSERVER,
    Person,
    by_name,
    everything_stdio,
    new_mark,
    python_server,
)
from tests.support.processes import processes_with
from totem.events import Notice, PermissionAsked
from totem.mcp.config import HttpServer, StdioServer
from totem.mcp.manager import McpManager
from totem.policy.permission import Rule
from totem.settings.config import Secret


def pipes() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
        except OSError:
            continue
    return count


def notices(person: Person) -> list[str]:
    return [n.text for n in person.of(Notice)]


def test_a_refused_server_is_never_started(tmp_path: Path) -> None:
    person = Person(tmp_path, replies={"mcp-start:everything": "reject"})
    mark = new_mark()

    async def main() -> None:
        servers = {"everything": everything_stdio(mark), "py": python_server(mark)}
        async with McpManager(
            tmp_path, servers, permission=person.permission, log_dir=tmp_path / "logs"
        ) as manager:
            assert [t.name.split("__")[0] for t in manager.tools] == ["py"] * len(manager.tools)
            assert len(processes_with(mark)) == 1  # only the Python server runs
            states = {s.name: s.state for s in manager.status()}
            assert states == {"everything": "refused", "py": "ready"}

    asyncio.run(main())
    asked = person.of(PermissionAsked)
    assert [a.patterns for a in asked] == [["everything"], ["py"]]
    assert any("'everything' was not started" in n for n in notices(person))


def test_headless_runs_start_only_what_a_rule_allows(tmp_path: Path) -> None:
    mark = new_mark()
    rules = [Rule("mcp-start", "py", "allow"), Rule("mcp", "py__a*", "allow")]
    person = Person(tmp_path, mode="headless", rules=rules)

    async def main() -> None:
        servers = {"everything": everything_stdio(mark), "py": python_server(mark)}
        async with McpManager(
            tmp_path, servers, permission=person.permission, log_dir=tmp_path / "logs"
        ) as manager:
            tools = by_name(manager.tools)
            assert "py__add" in tools and not any(n.startswith("everything") for n in tools)
            assert (await person.call(tools["py__add"], a=1, b=2)).output.startswith("3")
            try:  # not allowed by the rule, and nobody to ask
                await person.call(tools["py__whoami"])
            except Exception as exc:
                assert "needs permission" in str(exc)
            else:
                raise AssertionError("whoami is not allowed by a rule")

    asyncio.run(main())
    assert person.of(PermissionAsked) == []
    assert any("nobody can answer" in n for n in notices(person))


def test_servers_that_cannot_start_are_notices_and_the_others_work(tmp_path: Path) -> None:
    person = Person(tmp_path)
    mark = new_mark()
    raw = sys.executable

    async def main() -> None:
        servers = {
            "missing": StdioServer("missing", str(tmp_path / "no-such-program")),
            "exits": StdioServer("exits", raw, (str(RAWSERVER), "exit")),
            "silent": StdioServer("silent", raw, (str(RAWSERVER), "silent"), startup_timeout=1),
            "broken": StdioServer("broken", raw, (str(RAWSERVER), "badschema")),
            "odd": StdioServer("odd", raw, (str(RAWSERVER), "oddschema")),
            "nowhere": HttpServer("nowhere", "http://127.0.0.1:9/mcp", startup_timeout=5),
            "secret": StdioServer("secret", raw, env={"T": Secret("${env:TOTEM_NO_SUCH_VAR}")}),
            "py": python_server(mark),
        }
        async with McpManager(
            tmp_path, servers, permission=person.permission, log_dir=tmp_path / "logs"
        ) as manager:
            tools = by_name(manager.tools)
            assert set(tools) >= {"odd__ping", "py__add"} and "odd__odd" not in tools
            assert (await person.call(tools["odd__ping"])).output == "pong"
            states = {s.name: s.state for s in manager.status()}
            assert states == {**{n: "failed" for n in servers}, "odd": "ready", "py": "ready"}

    asyncio.run(main())
    text = "\n".join(notices(person))
    assert "'missing' could not start: the command" in text and "was not found" in text
    assert "'exits' could not start: the program exited before it answered" in text
    assert "rawserver: cannot start, missing configuration" in text  # its stderr
    assert "'silent' could not start: it did not answer within 1 s" in text
    assert "'broken' could not start: it sent an answer that breaks the MCP schema" in text
    assert "the tool odd with a schema that cannot be used" in text
    assert "'nowhere' could not start: the connection failed" in text
    assert "needs the environment variable(s) TOTEM_NO_SUCH_VAR" in text
    assert processes_with(mark) == []


def test_closing_ends_every_process_and_closes_the_pipes(tmp_path: Path) -> None:
    person = Person(tmp_path)
    mark = new_mark()
    before = pipes()

    async def main() -> None:
        servers = {"everything": everything_stdio(mark), "py": python_server(mark)}
        manager = McpManager(
            tmp_path, servers, permission=person.permission, log_dir=tmp_path / "logs"
        )
        await manager.start()
        assert len(processes_with(mark)) == 2
        assert pipes() > before
        await manager.aclose()
        assert processes_with(mark) == []
        await manager.aclose()  # twice is harmless

    asyncio.run(main())
    assert processes_with(mark) == [] and pipes() == before


def test_no_servers_configured_means_nothing_to_do(tmp_path: Path) -> None:
    person = Person(tmp_path)

    async def main() -> None:
        async with McpManager(tmp_path, {}, permission=person.permission) as manager:
            assert manager.tools == [] and manager.status() == []

    asyncio.run(main())
    assert person.events == []
