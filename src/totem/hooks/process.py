"""One hook run: `/bin/sh -c COMMAND` in the project, the event as JSON on its stdin.

The hook runs in a process group of its own; past its timeout the whole group is killed
(SIGTERM, then SIGKILL a moment later), so a hook that hangs, or starts children that do,
leaves nothing behind. Its environment is the person's, plus TOTEM_PROJECT_DIR (and
CLAUDE_PROJECT_DIR, which Claude Code's hooks read) set to the project root.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["HookRun", "run_hook"]

OUTPUT_LIMIT = 64_000  # characters kept of a hook's stdout and of its stderr
GRACE = 1.0  # seconds between SIGTERM and SIGKILL


@dataclass(frozen=True, slots=True)
class HookRun:
    """How a hook's command ended: its exit code (None when killed at its timeout)."""

    code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False


def _kill_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _stop(process: asyncio.subprocess.Process) -> None:
    """The hook's whole group ended: asked to, then made to."""
    _kill_group(process.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(process.wait(), GRACE)
    except TimeoutError:
        pass
    _kill_group(process.pid, signal.SIGKILL)  # the children too, even once the shell is gone
    await process.wait()


async def run_hook(command: str, payload: dict[str, Any], *, cwd: Path,
                   timeout: float) -> HookRun:
    """Run `command` with `payload` on stdin; its exit code and output, or a timeout."""
    env = {**os.environ, "TOTEM_PROJECT_DIR": str(cwd), "CLAUDE_PROJECT_DIR": str(cwd)}
    try:
        process = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", command, cwd=cwd, env=env, start_new_session=True,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        return HookRun(None, "", f"could not start: {exc}")
    data = json.dumps(payload, ensure_ascii=False).encode()
    try:
        out, err = await asyncio.wait_for(process.communicate(data), timeout)
    except TimeoutError:
        await _stop(process)
        return HookRun(None, "", "", timed_out=True)
    except (asyncio.CancelledError, Exception):
        await _stop(process)
        raise
    return HookRun(process.returncode, _text(out), _text(err))


def _text(data: bytes) -> str:
    return data.decode(errors="replace")[:OUTPUT_LIMIT]
