"""The chat (`totem` alone) on a pseudo-terminal, in a `headless.Project`: type, wait for text.

    with chat_in_terminal(project) as terminal:
        terminal.send(b"hello\\r"); terminal.expect("Hello."); terminal.leave()
"""

from __future__ import annotations

import contextlib
import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.support.headless import Project

__all__ = ["ChatTerminal", "chat_in_terminal"]

_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z~]")


class ChatTerminal:
    """What the chat printed (escapes removed), and the keys sent to it."""

    def __init__(self, process: subprocess.Popen[bytes], master: int) -> None:
        self.process = process
        self.master = master
        self.raw = b""

    @property
    def screen(self) -> str:
        return _ESCAPES.sub("", self.raw.decode(errors="replace")).replace("\r\n", "\n")

    def _read(self, wait: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], wait)
        if not ready:
            return True
        try:
            data = os.read(self.master, 4096)
        except OSError:
            return False
        self.raw += data
        return bool(data)

    def expect(self, text: str, count: int = 1, *, timeout: float = 60) -> None:
        """Read until `text` has been printed `count` times."""
        deadline = time.monotonic() + timeout
        while self.screen.count(text) < count:
            if time.monotonic() > deadline or not self._read(0.2):
                pytest.fail(f"never saw {text!r} x{count}; the screen:\n{self.screen}")

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def leave(self) -> int:
        """Ctrl-D at the prompt; the exit status."""
        deadline = time.monotonic() + 60
        while not self.screen.rstrip().endswith("›") and time.monotonic() < deadline:
            self._read(0.2)
        self.send(b"\x04")
        deadline = time.monotonic() + 30
        while self.process.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        if self.process.poll() is None:
            self.process.kill()
        return self.process.wait(timeout=10)


@contextlib.contextmanager
def chat_in_terminal(project: Project, *args: str) -> Iterator[ChatTerminal]:
    """`totem ARGS` (the chat) in the project on a pty, waiting for its first prompt."""
    master, slave = pty.openpty()
    env = dict(project.env, TERM="xterm", COLUMNS="100")
    process = subprocess.Popen([sys.executable, "-m", "totem", *args], cwd=project.root,
                               env=env, stdin=slave, stdout=slave, stderr=slave,
                               start_new_session=True)
    os.close(slave)
    terminal = ChatTerminal(process, master)
    try:
        terminal.expect("› ")
        yield terminal
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        with contextlib.suppress(OSError):
            os.close(master)
