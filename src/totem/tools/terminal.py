"""Where bash runs a command line when not here: an editor's terminal over ACP.

`ctx.terminal` is None for a run of our own (tools/bash.py starts the shell itself); a client
that offers its terminal (`totem.acp.terminal`) gives one, and the line runs there, with the
same timeout, output limit and abort. The permission check happens before, in bash itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, TypeAlias

from totem.abort import AbortSignal

__all__ = ["Outcome", "Terminal", "TerminalRun"]

Outcome: TypeAlias = Literal["exited", "timeout", "aborted"]


@dataclass(frozen=True, slots=True)
class TerminalRun:
    output: str  # what the command printed, within the output limit
    code: int  # the exit code; negative: killed by that signal
    outcome: Outcome


class Terminal(Protocol):
    async def run(
        self, line: str, *, cwd: Path, env: dict[str, str], timeout: float, output_limit: int,
        abort: AbortSignal, call_id: str,
    ) -> TerminalRun: ...
