"""Thoughts in text: for a model that thinks inline, text before `</think>` is reasoning.

The start of the answer is held back until the tag appears: what came before it becomes a
reasoning part, what follows is the answer. Without the tag the held text is released as the
answer when the step ends, or once it passes 40,000 characters.

For a model not known to think inline (`known=False`) the text itself decides: an answer
that starts with `<think>` is held the same way; any other start is released at once, so a
model that does not think inline streams without delay.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

__all__ = ["InlineThinkSplitter", "Piece"]

Piece: TypeAlias = tuple[Literal["text", "reasoning"], str]

_OPEN = "<think>"
_CLOSE = "</think>"
RELEASE_AFTER = 40_000


class InlineThinkSplitter:
    def __init__(self, *, release_after: int = RELEASE_AFTER, known: bool = True) -> None:
        self.release_after = release_after
        self.known = known  # the model is known to think inline: hold from the start
        self._held = ""
        self._decided = False  # the tag was seen, or the text was released

    def feed(self, chunk: str) -> list[Piece]:
        if self._decided:
            return [("text", chunk)] if chunk else []
        self._held += chunk
        end = self._held.find(_CLOSE)
        if end >= 0:
            thought = self._held[:end].replace(_OPEN, "", 1).strip()
            rest = self._held[end + len(_CLOSE) :].lstrip()
            self._held, self._decided = "", True
            pieces: list[Piece] = []
            if thought:
                pieces.append(("reasoning", thought))
            if rest:
                pieces.append(("text", rest))
            return pieces
        if len(self._held) > self.release_after:
            return self.flush()
        if not self.known and not self._may_open():
            return self.flush()
        return []

    def _may_open(self) -> bool:
        """The held text starts with `<think>`, or may still (only part of the tag came)."""
        start = self._held.lstrip()
        return start.startswith(_OPEN) or _OPEN.startswith(start)

    def flush(self) -> list[Piece]:
        """At the end of a step (or past the limit): release what is held as the answer."""
        held, self._held, self._decided = self._held, "", True
        if held.lstrip().startswith(_OPEN):
            return [("reasoning", held.replace(_OPEN, "", 1).strip())]
        return [("text", held)] if held else []
