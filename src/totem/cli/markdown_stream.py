"""An answer's Markdown drawn in the terminal as it streams (rich): headings, lists, code
blocks and emphasis instead of raw `#` and `**`. Used by the chat on a real terminal only;
rich is imported on the first answer, never at start-up."""

from __future__ import annotations

from typing import Any, TextIO

__all__ = ["MarkdownStream"]


class MarkdownStream:
    """One live region per stretch of answer text; `close` draws it for the last time."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.text = ""
        self._live: Any = None
        self._console: Any = None

    def add(self, delta: str) -> None:
        from rich.markdown import Markdown

        self.text += delta
        if self._live is None:
            from rich.console import Console
            from rich.live import Live

            if self._console is None:
                self._console = Console(file=self.out, force_terminal=True, soft_wrap=False)
            self._live = Live(console=self._console, refresh_per_second=8,
                              vertical_overflow="visible", auto_refresh=True)
            self._live.start()
        self._live.update(Markdown(self.text))

    @property
    def open(self) -> bool:
        return self._live is not None

    def close(self) -> None:
        if self._live is None:
            return
        from rich.markdown import Markdown

        self._live.update(Markdown(self.text), refresh=True)
        self._live.stop()
        self._live = None
        self.text = ""
