"""Processes the tests start or look for: a server run for the length of a `with`, and
checks on what is alive (read from /proc).

    with running(command, log=path, ready=lambda: port_open(port), what="the server",
                 timeout=20) as process: ...
    group_members(pgid), gone(pid), processes_with(mark), no_process(marker)
    wait_until(check, timeout)
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from tests.support.ports import wait_until_serving

__all__ = ["gone", "group_members", "no_process", "processes_with", "running", "stop",
           "wait_until"]


def stop(process: subprocess.Popen[bytes], *, grace: float = 5.0) -> None:
    """Ask `process` to end (SIGTERM); kill it if it is still there after `grace` seconds."""
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def running(
    command: Sequence[str],
    *,
    log: Path | None,
    ready: Callable[[], bool],
    what: str,
    timeout: float,
    env: dict[str, str] | None = None,
    interval: float = 0.05,
    grace: float = 5.0,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start `command` (output to `log`, or nowhere), wait until `ready()`, stop it on exit."""
    with open(log, "wb") if log else open(os.devnull, "wb") as out:
        process = subprocess.Popen(list(command), stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        wait_until_serving(process, ready, what=what, timeout=timeout, log=log,
                           interval=interval)
        yield process
    finally:
        stop(process, grace=grace)


def _pids() -> Iterator[int]:
    """Every process on this machine, by /proc."""
    return (int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit())


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state, parent, group...), or
    None when the process is not there any more."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is `pgid`."""
    return [pid for pid in _pids()
            if (fields := _stat(pid)) and fields[2] == str(pgid) and fields[0] not in ("Z", "X")]


def gone(pid: int) -> bool:
    """The process has exited (a zombie waiting for its reaper counts as gone)."""
    fields = _stat(pid)
    return fields is None or fields[0] in ("Z", "X")


def wait_until(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll `check` until it is true (True) or `timeout` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def processes_with(mark: str) -> list[int]:
    """Live processes (not zombies) whose environment holds TOTEM_TEST_MARK=mark."""
    needle = f"TOTEM_TEST_MARK={mark}".encode()
    found: list[int] = []
    for pid in _pids():
        try:
            environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if needle in environment and (fields := _stat(pid)) and fields[0] != "Z":
            found.append(pid)
    return found


def no_process(marker: str) -> bool:
    """True when no process on this machine has `marker` in its command line."""
    for pid in _pids():
        with contextlib.suppress(OSError):
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" "):
                return False
    return True
