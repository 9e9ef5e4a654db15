"""Real MCP servers for the tests, and a person who answers the questions.

    EVERYTHING       dist/index.js of @modelcontextprotocol/server-everything (tests/node)
    everything_stdio(mark)             a StdioServer config for it, tagged with `mark`
    running_everything_http()          it over streamable HTTP on a free port (a context)
    python_server(name, mark)          tests/mcp/pyserver.py (the Python SDK) over stdio
    Person(...)                        answers permission and questions from the events

(`processes_with(mark)`, the pids whose environment carries the mark, is in
tests.support.processes.)

When node or the package is missing the test is skipped, unless TOTEM_REQUIRE_SERVERS=1.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.support.ports import free_port, port_open
from tests.support.processes import running
from tests.support.required import unavailable
from totem.abort import AbortSignal
from totem.events import Event, PermissionAsked, QuestionAsked
from totem.mcp.config import HttpServer, StdioServer
from totem.policy.permission import Mode, PermissionService, Reply, Rule
from totem.policy.questions import QuestionService
from totem.tools.base import Tool, ToolContext, ToolResult, ToolSettings, parse_arguments

TESTS = Path(__file__).resolve().parents[1]
EVERYTHING = TESTS / "node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
PYSERVER = TESTS / "mcp/pyserver.py"
RAWSERVER = TESTS / "mcp/rawserver.py"
STARTUP = 20.0  # seconds: node starts in about 1 s here, more on a loaded machine
CALL = 10.0


def node() -> str:
    found = shutil.which("node")
    if found is None:
        unavailable("MCP test server: node is not on PATH")
    if not EVERYTHING.is_file():
        unavailable(f"MCP test server: {EVERYTHING} is missing (run npm install in tests/node)")
    return found


def new_mark() -> str:
    return uuid.uuid4().hex


def everything_stdio(
    mark: str, *, name: str = "everything", timeout: float = CALL, protocol: str = "legacy"
) -> StdioServer:
    from totem.settings.config import Secret

    return StdioServer(
        name=name,
        command=node(),
        args=(str(EVERYTHING), "stdio"),
        env={"TOTEM_TEST_MARK": Secret(mark)},
        timeout=timeout,
        startup_timeout=STARTUP,
        protocol=protocol,
    )


def python_server(
    mark: str, *, name: str = "py", timeout: float = CALL, protocol: str = "legacy"
) -> StdioServer:
    from totem.settings.config import Secret

    return StdioServer(
        name=name,
        command=sys.executable,
        args=(str(PYSERVER),),
        env={"TOTEM_TEST_MARK": Secret(mark)},
        timeout=timeout,
        startup_timeout=STARTUP,
        protocol=protocol,
    )


@contextlib.contextmanager
def running_everything_http(
    tmp: Path, *, name: str = "web", timeout: float = CALL, sse: bool = False
) -> Iterator[HttpServer]:
    """server-everything over streamable HTTP (or the older SSE transport) on 127.0.0.1 (it
    listens on all interfaces; only the loopback address is ever used)."""
    command = [node(), str(EVERYTHING), "sse" if sse else "streamableHttp"]
    port = free_port()
    with running(command, log=tmp / f"everything-http-{port}.log",
                 ready=lambda: port_open(port), what="server-everything (HTTP)",
                 timeout=STARTUP, env={**os.environ, "PORT": str(port)}):
        yield HttpServer(
            name=name,
            url=f"http://127.0.0.1:{port}/{'sse' if sse else 'mcp'}",
            transport="sse" if sse else "http",
            timeout=timeout,
            startup_timeout=STARTUP,
        )


Answer = Callable[[QuestionAsked], str | None]


class Person:
    """Sits at the terminal: answers each permission question with `reply`, or with
    `replies[key]` for the first key found of "permission:pattern", "permission", "pattern";
    answers each question with `answer`; records every event."""

    def __init__(
        self,
        root: Path,
        *,
        mode: Mode = "interactive",
        rules: list[Rule] | None = None,
        reply: str = "once",
        replies: dict[str, str] | None = None,
        answer: Answer | None = None,
    ) -> None:
        self.root = root
        self.events: list[Event] = []
        self.permission = PermissionService(rules=rules or [], mode=mode, project=str(root))
        self.questions = QuestionService(interactive=mode == "interactive")
        self.permission.emit = self.emit
        self.questions.emit = self.emit
        self.reply = reply
        self.replies = replies or {}
        self.answer = answer or (lambda q: q.options[0] if q.options else "")

    def emit(self, event: Event) -> None:
        self.events.append(event)
        loop = asyncio.get_running_loop()
        if isinstance(event, PermissionAsked):
            pattern = event.patterns[0]
            keys = (f"{event.permission}:{pattern}", event.permission, pattern)
            kind = next((self.replies[k] for k in keys if k in self.replies), self.reply)
            assert kind in ("once", "always", "reject")
            loop.call_soon(self.permission.reply, event.request_id, Reply(kind))  # type: ignore[arg-type]
        elif isinstance(event, QuestionAsked):
            loop.call_soon(self.questions.reply, event.request_id, self.answer(event))

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def context(self, tool: Tool, *, abort: AbortSignal | None = None) -> ToolContext:
        return ToolContext(
            root=self.root,
            session_id="ses_mcp",
            call_id=f"call_{uuid.uuid4().hex[:8]}",
            abort=abort or AbortSignal(),
            permission=self.permission,
            settings=ToolSettings(),
            emit=self.emit,
            tool_name=tool.name,
            questions=self.questions,
        )

    async def call(self, tool: Tool, **arguments: Any) -> ToolResult:
        """Validate the arguments as the loop does, then run the tool."""
        return await tool.run(parse_arguments(tool, arguments), self.context(tool))


def by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {t.name: t for t in tools}
