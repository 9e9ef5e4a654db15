"""Terminal input that an abort can interrupt.

One daemon thread reads lines from the terminal (with readline's editing when available) and
hands them to the event loop through a queue. A question waiting for a line is an ordinary
await: Ctrl-C cancels it, and the next line typed goes to whoever asks next, so no thread is
ever left holding the terminal for a question nobody waits for any more.
"""

from __future__ import annotations

import asyncio
import sys
import threading

__all__ = ["LineReader"]


class LineReader:
    def __init__(self) -> None:
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._thread: threading.Thread | None = None

    def _pump(self) -> None:
        while True:
            try:
                line: str | None = input()
            except EOFError:
                line = None
            except Exception:  # a closed or broken terminal: same as end of input
                line = None
            self._loop.call_soon_threadsafe(self._queue.put_nowait, line)
            if line is None:
                return

    async def read(self, prompt: str = "") -> str:
        """The next line typed; EOFError at end of input (Ctrl-D)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._pump, name="totem-input", daemon=True)
            self._thread.start()
        if prompt:
            sys.stdout.write(prompt)
            sys.stdout.flush()
        line = await self._queue.get()
        if line is None:
            self._queue.put_nowait(None)  # every later read sees the end too
            raise EOFError
        return line
