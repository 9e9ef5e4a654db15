"""The editor's terminal for bash (`tools/terminal.py`): `terminal/create` runs the line in
the project, the tool call shows the terminal live, and totem waits for its exit within the
timeout, kills it on a timeout or an abort, reads its output and releases it.

The permission check has happened before, in bash itself. The command runs where the editor
runs it: outside any sandbox of totem's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

from acp.interfaces import Client
from acp.schema import EnvVariable

from totem.abort import Aborted, AbortSignal
from totem.tools.terminal import Outcome, TerminalRun

__all__ = ["ClientTerminal"]


class ClientTerminal:
    def __init__(
        self, client: Client, session_id: str, *, shell: str,
        show: Callable[[str, str], Awaitable[None]],
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.shell = shell
        self.show = show  # (call id, terminal id): attach the terminal to the tool call

    async def run(
        self, line: str, *, cwd: Path, env: dict[str, str], timeout: float, output_limit: int,
        abort: AbortSignal, call_id: str,
    ) -> TerminalRun:
        created = await self.client.create_terminal(
            command=self.shell, args=["-c", line], cwd=str(cwd), session_id=self.session_id,
            env=[EnvVariable(name=k, value=v) for k, v in env.items()],
            output_byte_limit=max(output_limit, 300),
        )
        terminal_id = created.terminal_id
        try:
            await self.show(call_id, terminal_id)
            outcome = await self._wait(terminal_id, timeout, abort)
            output = await self.client.terminal_output(session_id=self.session_id,
                                                       terminal_id=terminal_id)
        finally:
            with contextlib.suppress(Exception):
                await self.client.release_terminal(session_id=self.session_id,
                                                   terminal_id=terminal_id)
        text = output.output
        if output.truncated:
            text = "[... earlier output cut by the output limit ...]\n" + text
        status = output.exit_status
        code = -signal.SIGKILL
        if status is not None and status.exit_code is not None:
            code = status.exit_code
        elif status is not None and status.signal:
            code = -_signal_number(status.signal)
        return TerminalRun(output=text, code=code, outcome=outcome)

    async def _wait(self, terminal_id: str, timeout: float, abort: AbortSignal) -> Outcome:
        """How the command ended; the terminal is killed on a timeout or an abort."""
        outcome: Outcome = "exited"
        waiting = self.client.wait_for_terminal_exit(session_id=self.session_id,
                                                     terminal_id=terminal_id)
        try:
            await abort.until(asyncio.wait_for(waiting, timeout))
        except TimeoutError:
            outcome = "timeout"
        except Aborted:
            outcome = "aborted"
        if outcome != "exited":
            with contextlib.suppress(Exception):
                await self.client.kill_terminal(session_id=self.session_id,
                                                terminal_id=terminal_id)
        return outcome


def _signal_number(name: str) -> int:
    try:
        return int(signal.Signals[name if name.startswith("SIG") else f"SIG{name}"])
    except KeyError:
        return int(signal.SIGKILL)
