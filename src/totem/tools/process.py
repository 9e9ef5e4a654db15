"""process: commands that keep running in the background (servers, watchers, long builds).

A `ProcessManager` is a session service (`ctx.state.service(ProcessManager)`): it starts
each command line in a process group of its own, as bash does, collects its output in the
background into a bounded buffer, and kills every group it started when the session ends
(`aclose`). The tool reads the output incrementally: each `output` gives what is new since
the last read. Commands are asked for and refused exactly like bash's.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import BaseModel, Field

from totem.tools.base import ToolContext, ToolError, ToolResult
from totem.tools.bash import ask_to_run, clean, spawn_shell, stop_group

if TYPE_CHECKING:
    from totem.sandbox.plan import SandboxPlan

__all__ = ["ManagedProcess", "ProcessInput", "ProcessManager", "ProcessTool"]

BUFFER = 1024 * 1024  # bytes of output kept per process
MAX_PROCESSES = 16  # running at once per session
START_WAIT = 0.3  # seconds to wait after a start, to report a command that fails at once


class _Buffer:
    """The last BUFFER bytes of a stream, with a read position in the whole stream."""

    def __init__(self, size: int = BUFFER) -> None:
        self.size = size
        self.data = bytearray()
        self.total = 0  # bytes received
        self.read = 0  # bytes already given to the model (or skipped)

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        if len(self.data) > self.size:
            del self.data[: len(self.data) - self.size]

    def take(self, limit: int) -> tuple[bytes, int]:
        """The bytes not yet read (the last `limit` of them) and how many were skipped."""
        new = self.total - self.read
        kept = min(new, len(self.data), limit)
        self.read = self.total
        return bytes(self.data[len(self.data) - kept :]), new - kept


@dataclass(eq=False)
class ManagedProcess:
    id: str
    command: str
    process: asyncio.subprocess.Process
    started: float = field(default_factory=time.monotonic)
    buffer: _Buffer = field(default_factory=_Buffer)
    reader: asyncio.Task[None] | None = None
    stopped: bool = False

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process.returncode is None

    def status(self) -> str:
        code = self.process.returncode
        if code is None:
            return "running"
        if self.stopped:
            return "stopped"
        return f"killed by signal {-code}" if code < 0 else f"exited with code {code}"


class ProcessManager:
    """The background processes of one session."""

    def __init__(self) -> None:
        self.processes: dict[str, ManagedProcess] = {}
        self._count = 0

    async def start(
        self, command: str, *, cwd: Path, shell: str = "/bin/bash",
        plan: SandboxPlan | None = None,
    ) -> ManagedProcess:
        running = sum(1 for p in self.processes.values() if p.running)
        if running >= MAX_PROCESSES:
            raise ToolError(f"{running} processes are running already; stop one first.")
        process = await spawn_shell(command, cwd=cwd, shell=shell, plan=plan)
        self._count += 1
        managed = ManagedProcess(f"p{self._count}", command, process)
        managed.reader = asyncio.create_task(_collect(process.stdout, managed.buffer))
        self.processes[managed.id] = managed
        return managed

    def get(self, process_id: str) -> ManagedProcess:
        found = self.processes.get(process_id.strip())
        if found is None:
            known = ", ".join(self.processes) or "none started yet"
            raise ToolError(f"No process {process_id!r} (known: {known}).")
        return found

    async def stop(self, managed: ManagedProcess) -> None:
        """Kill the process's whole group (SIGTERM, then SIGKILL) and wait for its end."""
        if managed.running:
            managed.stopped = True
        await stop_group(managed.pid)
        await _wait_exit(managed.process, 2.0)
        if managed.reader is not None:
            await asyncio.wait({managed.reader}, timeout=0.5)
            managed.reader.cancel()

    async def aclose(self) -> None:
        """Kill every group this manager started (the session is ending)."""
        processes = list(self.processes.values())
        await asyncio.gather(*(self.stop(p) for p in processes), return_exceptions=True)


async def _collect(stream: asyncio.StreamReader | None, buffer: _Buffer) -> None:
    assert stream is not None
    while chunk := await stream.read(65536):
        buffer.add(chunk)


async def _wait_exit(process: asyncio.subprocess.Process, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while process.returncode is None and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


class ProcessInput(BaseModel):
    action: Literal["start", "list", "output", "stop"] = Field(description="What to do.")
    command: str | None = Field(None, description="start: the command line.")
    id: str | None = Field(None, description="output, stop: the process id.")
    sandbox: bool = Field(True, description=(
        "start: in the sandbox (writes in the project only, no network); false asks to run "
        "outside it."))
    reason: str | None = Field(None, description="Why it must run outside.")


class ProcessTool:
    name: ClassVar[str] = "process"
    description: ClassVar[str] = (
        "Background commands (servers, watchers): start gives an id; list; "
        "output gives new output since the last read; stop kills it."
    )
    read_only: ClassVar[bool] = False
    Input: ClassVar[type[BaseModel]] = ProcessInput

    async def run(self, args: ProcessInput, ctx: ToolContext) -> ToolResult:
        manager = ctx.state.service(ProcessManager)
        if args.action == "start":
            return await _start(manager, args, ctx)
        if args.action == "list":
            return ToolResult(_listing(manager), title="processes")
        if not args.id:
            raise ToolError(f"{args.action} needs the id of a process (see action 'list').")
        managed = manager.get(args.id)
        if args.action == "stop":
            await manager.stop(managed)
        text = _new_output(managed, ctx.settings.output_limit)
        return ToolResult(f"{text}\n\n[{managed.id} {managed.status()}]", title=managed.id)


async def _start(manager: ProcessManager, args: ProcessInput, ctx: ToolContext) -> ToolResult:
    line = (args.command or "").strip()
    if not line:
        raise ToolError("start needs a command.")
    plan = await ask_to_run(line, ctx, title="start in the background: ",  # as bash does
                            outside=not args.sandbox, reason=args.reason or "")
    ctx.abort.check()
    cwd = Path(os.path.realpath(ctx.root))
    managed = await manager.start(line, cwd=cwd, shell=ctx.settings.shell, plan=plan)
    await _wait_exit(managed.process, START_WAIT)
    if not managed.running and managed.reader is not None:
        await asyncio.wait({managed.reader}, timeout=0.5)
    output = _new_output(managed, ctx.settings.output_limit)
    head = f"Started {managed.id} (pid {managed.pid}): {managed.status()}."
    if managed.running:
        head += f" Read its output with action 'output', id '{managed.id}'."
    return ToolResult(f"{head}\n{output}", title=f"{managed.id}: {_short(line)}")


def _new_output(managed: ManagedProcess, limit: int) -> str:
    data, skipped = managed.buffer.take(max(limit, 300))
    text = clean(data).rstrip("\n")
    if skipped:
        text = f"[... {skipped} earlier bytes skipped; showing the latest ...]\n{text}"
    return text or "(no new output)"


def _listing(manager: ProcessManager) -> str:
    if not manager.processes:
        return "No background processes."
    now = time.monotonic()
    lines = [
        f"{p.id}  {p.status()}  {_age(now - p.started)}  {_short(p.command)}"
        for p in manager.processes.values()
    ]
    return "\n".join(lines)


def _age(seconds: float) -> str:
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def _short(line: str, size: int = 80) -> str:
    line = " ".join(line.split())
    return line if len(line) <= size else line[: size - 3] + "..."
