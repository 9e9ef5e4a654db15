"""bash: run a command line in the project root, with a timeout, an output limit and abort.

The command runs in a session of its own, so its whole process group (background jobs
included) is stopped when it times out, when the run is aborted or the task cancelled, and
when the shell exits leaving jobs behind: SIGTERM, then SIGKILL after a grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, Field

from totem.abort import Aborted
from totem.events import Notice
from totem.policy.bash_rules import always_rules
from totem.policy.shell_parse import forbidden, split_commands
from totem.policy.shell_writes import locate, write_targets
from totem.tools.base import ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from totem.sandbox.plan import SandboxPlan

__all__ = ["Bash", "BashInput", "ask_to_run", "sandbox_plan", "spawn_shell"]

KILL_GRACE = 1.0  # seconds between SIGTERM and SIGKILL
DRAIN = 0.5  # seconds to wait for the last output once the shell has exited
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
ENVIRONMENT = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "NO_COLOR": "1"}


class BashInput(BaseModel):
    command: str = Field(description="The command line, run by bash in the project root.")
    timeout: float | None = Field(None, gt=0, description="Seconds before it is stopped.")
    description: str | None = Field(None, description="What it does, in a few words.")
    sandbox: bool = Field(True, description=(
        "Run in the sandbox (writes in the project only, no network); false asks to run "
        "outside it."))
    reason: str | None = Field(None, description="Why it must run outside.")


class _Output:
    """The head and the tail of a stream of bytes, and its length."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 300)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if len(self.head) < self.limit:
            self.head += chunk[: self.limit - len(self.head)]
        self.tail += chunk
        if len(self.tail) > self.limit:
            del self.tail[: len(self.tail) - self.limit]

    def text(self) -> str:
        if self.total <= self.limit:
            return clean(self.head)
        keep_head, keep_tail = self.limit * 2 // 3, self.limit // 3
        cut = self.total - keep_head - keep_tail
        return (
            clean(self.head[:keep_head])
            + f"\n\n[... {cut} bytes of output cut; redirect the output to a file and read or "
            "grep it to see everything ...]\n\n" + clean(self.tail[-keep_tail:])
        )


def clean(data: bytes | bytearray) -> str:
    return _ANSI.sub("", bytes(data).decode("utf-8", errors="replace"))


class Bash:
    name: ClassVar[str] = "bash"
    description: ClassVar[str] = (
        "Run a bash command in the project root; returns its output and exit code. "
        "Use read, grep, glob and edit for files instead of cat, grep, find and sed."
    )
    read_only: ClassVar[bool] = False
    Input: ClassVar[type[BaseModel]] = BashInput

    async def run(self, args: BashInput, ctx: ToolContext) -> ToolResult:
        line = args.command.strip()
        if not line:
            raise ToolError("The command is empty.")
        plan = await ask_to_run(line, ctx, outside=not args.sandbox, reason=args.reason or "")
        ctx.abort.check()
        limit = ctx.settings.bash_max_timeout
        timeout = min(args.timeout or ctx.settings.bash_timeout, limit)
        if ctx.terminal is None or plan is not None:  # a sandboxed line runs here, wrapped
            output, code, outcome = await _execute(line, ctx, timeout, plan)
            printed = output.text()
        else:  # the client's terminal (an editor over ACP), for a line outside the sandbox
            ran = await ctx.terminal.run(
                line, cwd=Path(os.path.realpath(ctx.root)), env=ENVIRONMENT, timeout=timeout,
                output_limit=ctx.settings.output_limit, abort=ctx.abort, call_id=ctx.call_id)
            printed, code, outcome = ran.output, ran.code, ran.outcome
        title = args.description or (line if len(line) <= 80 else line[:80] + "...")
        text = printed.rstrip("\n") or "(no output)"
        if outcome == "aborted":
            raise Aborted(text + "\n[Aborted by user]")
        if outcome == "timeout":
            note = f"[Timed out after {timeout:g} s; the command and its processes were stopped.]"
            return ToolResult(f"{text}\n\n{note}", title=title, is_error=True)
        status = f"killed by signal {-code}" if code < 0 else f"Exit code: {code}"
        if code > 0 and "assert" in text:
            from totem.tools.pytest_output import failed_comparison

            plain = failed_comparison(text)  # small models misread pytest's diff
            status += f"\n[The first failure, in plain words: {plain}]" if plain else ""
        return ToolResult(f"{text}\n\n{status}", title=title, is_error=code != 0)


async def ask_to_run(
    line: str, ctx: ToolContext, *, title: str = "", outside: bool = False, reason: str = ""
) -> SandboxPlan | None:
    """Refuse a forbidden command before anything else. In the sandbox, a command that no rule
    denies runs without a question; the plan it runs under is returned. Outside it (the
    sandbox is off or missing, or the model asks to leave it and the person agrees), check the
    files the line writes (redirects, `tee`) and ask `bash` for each command of the line (what
    "always" remembers is in `bash_rules`); None is returned."""
    commands = split_commands(line) or [line]
    refusal = forbidden(commands, ctx.settings.forbidden_commands)
    if refusal is not None:
        raise ToolError(refusal)
    plan = sandbox_plan(ctx)
    short = line if len(line) <= 200 else line[:200] + "..."
    if plan is not None and not outside:
        await _refuse_denied(line, commands, ctx)
        return plan
    if plan is not None:  # the model asks to leave the sandbox: a question of its own kind
        why = f" (reason: {reason.strip()})" if reason.strip() else " (no reason given)"
        await ctx.ask("unsandboxed", commands, title=f"run OUTSIDE the sandbox{why}: {short}",
                      always=always_rules(commands, line=line))
    inside = await _ask_to_write_outside(line, ctx)
    for path in inside:  # an `edit` deny rule holds for a redirect too
        if ctx.permission.action_for("edit", path) == "deny":
            await ctx.ask("edit", [path], title=f"write {path}")
    asked = any(ctx.permission.action_for("bash", c) != "allow" for c in commands)
    if plan is not None:
        asked = True  # the person saw the line in the `unsandboxed` question
        for command in commands:  # a rule that denies it still does
            if ctx.permission.action_for("bash", command) == "deny":
                await ctx.ask("bash", [command], title=title + short)
    else:
        await ctx.ask("bash", commands, title=title + short,
                      always=always_rules(commands, line=line))
    if not asked:  # the person did not see the line: its writes are edits to ask about
        for path in inside:
            await ctx.ask("edit", [path], title=f"write {path}")
    return None


_NOTICES: set[str] = set()  # what was said about a missing sandbox, once per process
_log = logging.getLogger("totem.sandbox")


def sandbox_plan(ctx: ToolContext) -> SandboxPlan | None:
    """The plan of a command of this call, or None when commands run outside any sandbox
    (it is off, or this computer has none: said once, as a notice)."""
    settings = ctx.settings.sandbox
    if settings.mode == "off":
        return None
    from totem.sandbox.backend import available
    from totem.sandbox.plan import make_plan

    found = available()
    if not found.works:
        if found.reason not in _NOTICES:
            _NOTICES.add(found.reason)
            text = (f"Commands run without a sandbox: {found.reason}. They are asked for as "
                    "before (see `totem doctor`).")
            if ctx.terminal is not None or ctx.emit is None:
                # the editor runs them in its own terminal: nothing of totem's to warn about
                # in the conversation; the log keeps the line
                _log.warning(text)
            else:
                ctx.emit(Notice(text, "warning"))
        return None
    return make_plan(settings, ctx.root)


async def _refuse_denied(line: str, commands: list[str], ctx: ToolContext) -> None:
    """In the sandbox: what a rule denies is still denied (a command, or a file it writes)."""
    for command in commands:
        if ctx.permission.action_for("bash", command) == "deny":
            await ctx.ask("bash", [command], title=command)
    root = Path(os.path.realpath(ctx.root))
    for target in write_targets(line):
        try:
            place, path = locate(target, root)
        except OSError:  # a path bash alone can follow (/proc/1/root...): the sandbox holds
            continue
        if place == "inside" and ctx.permission.action_for("edit", path) == "deny":
            await ctx.ask("edit", [path], title=f"write {path}")


async def _ask_to_write_outside(line: str, ctx: ToolContext) -> list[str]:
    """Ask for each file the line writes outside the project (or where bash alone can know);
    the paths it writes inside, relative to the root."""
    root = Path(os.path.realpath(ctx.root))
    inside: list[str] = []
    for target in write_targets(line):
        place, path = locate(target, root)
        if place == "inside":
            inside.append(path)
        elif place == "outside":
            await ctx.ask("external_directory", [path], title=f"write {path}, outside the project")
        elif place == "unknown":
            where = f"write to {path}, a path known only when the command runs"
            await ctx.ask("external_directory", [path], title=where)
    return inside


async def spawn_shell(
    line: str, *, cwd: Path, shell: str, plan: SandboxPlan | None = None
) -> asyncio.subprocess.Process:
    """Start `shell -c line` in a process group of its own, output on a pipe, inside the
    sandbox of `plan` when one is given. A cancel while it starts stops the group, so no
    process outlives a cancelled start."""
    argv, env = [shell, "-c", line], {**os.environ, **ENVIRONMENT}
    if plan is not None:
        from totem.sandbox import sandboxed_command

        argv, env = sandboxed_command(argv, plan, env)
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
    )
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            started = await spawn
            await stop_group(started.pid)
            await started.wait()
        raise


async def _execute(
    line: str, ctx: ToolContext, timeout: float, plan: SandboxPlan | None
) -> tuple[_Output, int, str]:
    """Run the line; the output, the exit code and how it ended (exited, timeout, aborted)."""
    ctx.abort.check()
    process = await spawn_shell(
        line, cwd=Path(os.path.realpath(ctx.root)), shell=ctx.settings.shell, plan=plan
    )
    output = _Output(ctx.settings.output_limit)
    reading = asyncio.create_task(_pump(process.stdout, output))
    exited = asyncio.create_task(_exit(process))
    aborted = asyncio.create_task(ctx.abort.wait())
    outcome = "exited"
    try:
        done, _ = await asyncio.wait(
            {exited, aborted}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if aborted in done:
            aborted.result()
            outcome = "aborted"
        elif exited in done:
            # Jobs left in the background may hold the pipe open: give them a moment.
            await asyncio.wait({reading}, timeout=DRAIN)
        else:
            outcome = "timeout"
    finally:
        aborted.cancel()
        try:
            await stop_group(process.pid)
        finally:
            # The shell's exit status and the end of its output, unless something that left
            # the group still holds the pipe.
            await asyncio.wait({reading, exited}, timeout=KILL_GRACE)
            reading.cancel()
            exited.cancel()
    code = process.returncode if process.returncode is not None else -signal.SIGKILL
    return output, code, outcome


async def _exit(process: asyncio.subprocess.Process) -> None:
    """Return when the shell has exited. (`process.wait()` also waits, before Python 3.12,
    for its output pipe to close, which a background job can hold open for ever.)"""
    while process.returncode is None:
        await asyncio.sleep(0.02)


async def _pump(stream: asyncio.StreamReader | None, output: _Output) -> None:
    assert stream is not None
    while chunk := await stream.read(65536):
        output.add(chunk)


def _group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs (zombies waiting for a reaper do not)."""
    if os.path.isdir("/proc/self"):
        return any(_member(entry, pgid) for entry in os.listdir("/proc") if entry.isdigit())
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _member(pid: str, pgid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            fields = file.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X")


async def stop_group(pgid: int) -> None:
    """SIGTERM to the process group, SIGKILL to what is left after the grace period."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        waited, pause = 0.0, 0.005  # short pauses first: what is left of a finished command
        while waited < KILL_GRACE:  # (a sandbox's last processes) is often gone at once
            await asyncio.sleep(pause)
            waited += pause
            if not _group_alive(pgid):
                return
            pause = min(pause * 2, 0.05)
    finally:
        if _group_alive(pgid):
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
