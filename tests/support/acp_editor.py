"""An editor for the tests: the ACP SDK's own client side, which starts `totem acp` as a
separate process and talks to it over its stdio, as Zed does.

It answers permission requests from a script of option ids, can hold unsaved buffers and
offer them as its file system (`fs/read_text_file`, `fs/write_text_file`), can run
terminals (`terminal/*`) as real processes, keeps every session update it receives, and
records every JSON-RPC message both ways (the transcript).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.client.connection import ClientSideConnection
from acp.connection import StreamEvent
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    FileSystemCapabilities,
    Implementation,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    TextContentBlock,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from acp.stdio import spawn_agent_process

__all__ = ["Editor", "connected", "text_of"]


@dataclass
class _Terminal:
    process: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    pump: asyncio.Task[None] | None = None


def text_of(updates: list[Any], kind: type) -> str:
    """The text of the message (or thought) chunks among `updates`."""
    return "".join(u.content.text for u in updates
                   if isinstance(u, kind) and isinstance(u.content, TextContentBlock))


class Editor(Client):
    def __init__(self, *, answers: list[str] | None = None, fs: bool = False,
                 terminal: bool = False) -> None:
        self.answers = list(answers or [])  # option ids, in order; "cancel": no choice
        self.fs = fs
        self.terminal = terminal
        self.buffers: dict[str, str] = {}  # unsaved buffers, by absolute path
        self.updates: dict[str, list[Any]] = {}
        self.permissions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.terminals: dict[str, _Terminal] = {}
        self.commands: list[list[str]] = []
        self.transcript: list[tuple[str, dict[str, Any]]] = []
        self.first_chunk = asyncio.Event()

    def capabilities(self) -> ClientCapabilities:
        return ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=self.fs, write_text_file=self.fs),
            terminal=self.terminal)

    def observe(self, event: StreamEvent) -> None:
        self.transcript.append((event.direction.value, event.message))

    # the client's side of the protocol --------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.setdefault(session_id, []).append(update)
        if isinstance(update, AgentMessageChunk | AgentThoughtChunk):
            self.first_chunk.set()

    async def request_permission(self, options: list[PermissionOption], session_id: str,
                                 tool_call: ToolCallUpdate,
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        answer = self.answers.pop(0) if self.answers else "cancel"
        if answer == "cancel":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer))

    async def read_text_file(self, path: str, session_id: str, limit: int | None = None,
                             line: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        if not self.fs:
            raise RequestError.method_not_found("fs/read_text_file")
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text())
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(self, content: str, path: str, session_id: str,
                              **kwargs: Any) -> WriteTextFileResponse | None:
        if not self.fs:
            raise RequestError.method_not_found("fs/write_text_file")
        self.writes.append((path, content))
        self.buffers[path] = content  # the editor saves the buffer it changed
        Path(path).write_text(content)
        return WriteTextFileResponse()

    async def create_terminal(self, command: str, session_id: str, args: list[str] | None = None,
                              cwd: str | None = None, env: list[EnvVariable] | None = None,
                              output_byte_limit: int | None = None,
                              **kwargs: Any) -> CreateTerminalResponse:
        if not self.terminal:
            raise RequestError.method_not_found("terminal/create")
        self.commands.append([command, *(args or [])])
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        terminal = _Terminal(process)
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = terminal

        async def pump() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(4096):
                terminal.output += chunk

        terminal.pump = asyncio.create_task(pump())
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str,
                              **kwargs: Any) -> TerminalOutputResponse:
        terminal = self.terminals[terminal_id]
        code = terminal.process.returncode
        status = None if code is None else TerminalExitStatus(exit_code=code)
        return TerminalOutputResponse(output=terminal.output.decode(), truncated=False,
                                      exit_status=status)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: Any) -> WaitForTerminalExitResponse:
        terminal = self.terminals[terminal_id]
        code = await terminal.process.wait()
        if terminal.pump is not None:
            await terminal.pump
        return WaitForTerminalExitResponse(exit_code=code)

    async def kill_terminal(self, session_id: str, terminal_id: str,
                            **kwargs: Any) -> KillTerminalResponse | None:
        with contextlib.suppress(ProcessLookupError):
            self.terminals[terminal_id].process.kill()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str,
                               **kwargs: Any) -> ReleaseTerminalResponse | None:
        return ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


@contextlib.asynccontextmanager
async def connected(editor: Editor, *, cwd: Path, env: dict[str, str],
                    log: Path) -> AsyncIterator[ClientSideConnection]:
    """`totem acp` started as the editor starts it, initialized; its stderr goes to `log`."""
    with log.open("ab") as errors:
        async with spawn_agent_process(
            editor, sys.executable, "-m", "totem", "acp", cwd=cwd, env=env,
            transport_kwargs={"stderr": errors.fileno()}, observers=[editor.observe],
        ) as (conn, _process):
            await conn.initialize(protocol_version=PROTOCOL_VERSION,
                                  client_capabilities=editor.capabilities(),
                                  client_info=Implementation(name="tests", version="1"))
            yield conn
