"""A child process in its own process group, waited for with a limit, the group killed after."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path


def run_in_group(
    command: list[str], *, cwd: Path, env: dict[str, str], stdout: Path, stderr: Path | None,
    timeout: float,
) -> tuple[int | None, float]:
    """Runs `command` with its output in files; returns (exit code or None when killed at the
    timeout, wall seconds). Whatever it started is killed with it."""
    started = time.monotonic()
    with stdout.open("wb") as out, (stderr.open("wb") if stderr else out) as err:
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=out,
            stderr=err if stderr else subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
        try:
            code: int | None = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        except BaseException:  # the runner itself is stopped: leave nothing behind
            kill_group(process)
            raise
        kill_group(process)  # a child the agent left running goes too
    return code, time.monotonic() - started


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process group, SIGKILL after 10 s."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
