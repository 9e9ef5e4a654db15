"""A command on a pseudo-terminal, answering a prompt each time it appears on the screen."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

import pytest

__all__ = ["ANSI", "in_terminal"]

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def in_terminal(
    command: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    prompt: bytes,
    answer: bytes | None,
    times: int | None = None,
    timeout: float = 90,
) -> str:
    """Run `command` on a pty; type `answer` each time `prompt` appears anew (at most `times`
    times; never when `answer` is None); return the screen without colours. Fails the test
    when the command does not end within `timeout`."""
    master, slave = pty.openpty()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdin=slave, stdout=slave,
                               stderr=slave, start_new_session=True)
    os.close(slave)
    screen, answered = b"", 0
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 4096)
                except OSError:  # the other side closed
                    break
                if not data:
                    break
                screen += data
                wanted = answer is not None and (times is None or answered < times)
                if wanted and screen.count(prompt) > answered:
                    answered += 1
                    os.write(master, answer or b"")
            elif process.poll() is not None:
                break
        else:
            process.kill()
            pytest.fail("the command did not finish:\n" + screen.decode(errors="replace"))
    finally:
        process.wait(timeout=30)
        os.close(master)
    return ANSI.sub("", screen.decode(errors="replace")).replace("\r\n", "\n")
