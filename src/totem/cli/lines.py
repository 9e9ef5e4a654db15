"""Terminal input that an abort can interrupt, and that a question cannot take from the past.

A daemon thread reads a line (with readline's editing when available) each time one is asked
for, and hands it to the event loop through a queue. A question waiting for a line is an
ordinary await: Ctrl-C cancels it, and a line already being typed goes to whoever asks next, so
no thread is ever left holding the terminal for a question nobody waits for any more.

Nothing is read while the agent works, so what is typed meanwhile stays in the terminal's
buffer: the next prompt gets it as type-ahead, but a question (`read(fresh=True)`) throws it
away first, so only keys pressed after the question appeared can answer it.

In the chat the terminal is put in bracketed-paste mode: a paste arrives between ESC[200~ and
ESC[201~ and is one message however many lines it has; Alt-Enter adds a line break.
"""

from __future__ import annotations

import asyncio
import os
import queue
import select
import sys
import threading

__all__ = ["LineReader"]

PASTE_ON = "\x1b[?2004h"
PASTE_OFF = "\x1b[?2004l"
PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"


def _is_tty() -> bool:
    try:
        return os.isatty(sys.stdin.fileno()) and os.isatty(sys.stdout.fileno())
    except (OSError, ValueError):
        return False


def _gnu_readline() -> bool:
    """Turn on readline's own handling of pastes and Alt-Enter; False without GNU readline."""
    try:
        import readline
    except ImportError:
        return False
    if "libedit" in (readline.__doc__ or ""):
        return False
    readline.parse_and_bind("set enable-bracketed-paste on")
    readline.parse_and_bind(r'"\e\C-m": "\C-v\C-j"')  # Alt-Enter: a line break, not Enter
    readline.parse_and_bind(r'"\e\C-j": "\C-v\C-j"')
    return True


def _open_paste(text: str) -> bool:
    return PASTE_START in text and PASTE_END not in text.split(PASTE_START, 1)[1]


def _unbracket(first: str) -> str:
    """A line read without readline: a paste that spans lines is joined back into one."""
    line = first
    while _open_paste(line):
        line += "\n" + input()
    return line.replace(PASTE_START, "").replace(PASTE_END, "")


def _typed_ahead() -> tuple[bool, str | None]:
    """A line typed while nothing was reading, as the terminal's own editing made it (None
    for Ctrl-D); (False, None) when nothing complete is waiting. Readline would lose a Ctrl-D
    typed ahead, so what waits is read with the terminal still in line mode."""
    fd = sys.stdin.fileno()
    if not select.select([fd], [], [], 0)[0]:
        return False, None
    data = os.read(fd, 65536)
    if not data:
        return True, None
    text = data.decode(errors="replace")
    while _open_paste(text) and (more := os.read(fd, 65536)):
        text += more.decode(errors="replace")
    return True, text.rstrip("\n").replace(PASTE_START, "").replace(PASTE_END, "")


class LineReader:
    """Lines typed in the terminal, read one at a time when asked for."""

    def __init__(self, *, bracketed_paste: bool = False) -> None:
        self._queue: asyncio.Queue[tuple[int, str | None]] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._requests: queue.SimpleQueue[tuple[int, str]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._asked = 0  # the number of the last line asked of the thread
        self._reading = False  # the thread is reading a line now
        self._oldest_wanted = 0  # lines asked for before this number are thrown away
        self._tty = _is_tty()
        self._paste = bracketed_paste and self._tty
        if self._paste:
            _gnu_readline()
            self._terminal(PASTE_ON)

    def close(self) -> None:
        """Give the terminal back as it was."""
        if self._paste:
            self._terminal(PASTE_OFF)
            self._paste = False

    def _terminal(self, code: str) -> None:
        try:
            os.write(sys.stdout.fileno(), code.encode())
        except OSError:
            pass

    def _pump(self) -> None:
        while True:
            number, prompt = self._requests.get()
            line = self._read_line(prompt)
            if self._paste:
                self._terminal(PASTE_ON)  # readline turns it off after each line
            self._loop.call_soon_threadsafe(self._deliver, number, line)
            if line is None:
                return

    def _read_line(self, prompt: str) -> str | None:
        try:
            found, line = _typed_ahead() if self._tty else (False, None)
            if found:
                print(prompt + (line or ""), flush=True)
                return line
            return _unbracket(input(prompt))
        except EOFError:
            return None
        except Exception:  # a closed or broken terminal: same as end of input
            return None

    def _deliver(self, number: int, line: str | None) -> None:
        self._reading = False
        self._queue.put_nowait((number, line))

    def _ask_thread(self, prompt: str) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._pump, name="totem-input", daemon=True)
            self._thread.start()
        self._asked += 1
        self._reading = True
        self._requests.put((self._asked, prompt))

    def _forget_typed(self) -> None:
        """Throw away every line and key typed so far."""
        while not self._queue.empty():
            number, line = self._queue.get_nowait()
            if line is None:
                self._queue.put_nowait((number, line))
                break
        self._oldest_wanted = self._asked + 1
        if self._tty:
            import termios

            try:
                termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
            except (OSError, termios.error):
                pass

    async def read(self, prompt: str = "", *, fresh: bool = False) -> str:
        """The next line typed; EOFError at end of input (Ctrl-D).

        With `fresh`, only a line typed from now on: what was typed before is thrown away.
        """
        if fresh:
            self._forget_typed()
        while True:
            if not self._reading and self._queue.empty():
                self._ask_thread(prompt)
            elif prompt:  # a line already being read (asked for by an earlier, cancelled read)
                sys.stdout.write(prompt)
                sys.stdout.flush()
            number, line = await self._queue.get()
            if line is None:
                self._queue.put_nowait((number, None))  # every later read sees the end too
                raise EOFError
            if number >= self._oldest_wanted:
                return line
