"""Loopback ports for the tests' servers: a free one, and waiting until one answers.

    port = free_port()
    wait_until_serving(process, lambda: http_ok(f"{root}/health"), what="aimock", log=path)

`wait_until_serving` fails the test (with the tail of the server's log) when the process
exits first or the time runs out.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = ["closed_port", "free_port", "http_ok", "port_open", "wait_until_serving"]


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def closed_port() -> int:
    """A port of 127.0.0.1 that refuses connections (free when this returns)."""
    return free_port()


def http_ok(url: str, *, timeout: float = 1.0) -> bool:
    """True when GET `url` answers 200."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def port_open(port: int) -> bool:
    """True when something accepts connections on 127.0.0.1:`port`."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
        return True
    return False


def wait_until_serving(
    process: subprocess.Popen[bytes],
    ready: Callable[[], bool],
    *,
    what: str,
    timeout: float,
    log: Path | None = None,
    interval: float = 0.05,
) -> None:
    """Wait until `ready()` is true; fail the test if `process` exits first or `timeout`
    seconds pass, showing the end of `log`."""
    deadline = time.monotonic() + timeout
    while not ready():
        if process.poll() is not None or time.monotonic() > deadline:
            tail = log.read_text(encoding="utf-8", errors="replace")[-3000:] if log else ""
            pytest.fail(f"{what} did not start (exit {process.poll()}):\n{tail}")
        time.sleep(interval)
