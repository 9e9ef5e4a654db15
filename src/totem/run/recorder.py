"""Turns one model call's stream into the parts of one assistant message, as they arrive.

Each delta is forwarded as an event at once and the part it belongs to is written to
the store: tool parts on every change, text and reasoning at most 50 ms after they grew (a
write per delta would rewrite a long answer thousands of times), and at once on an abort or
when the step ends. A hard kill can lose at most the last 50 ms of streamed text.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import assert_never

from totem.events import Event, ReasoningDelta, TextDelta
from totem.messages import Message, Part, ReasoningPart, TextPart, ToolPart, Usage
from totem.providers.base import (
    ReasoningChunk,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
    UsageReport,
)
from totem.run.thinking import InlineThinkSplitter
from totem.store.base import Store

__all__ = ["StepRecorder"]

FLUSH_EVERY = 0.05


class StepRecorder:
    def __init__(
        self,
        message: Message,
        *,
        store: Store,
        emit: Callable[[Event], None],
        thinks_inline: bool = False,
    ) -> None:
        self.message = message
        self.store = store
        self.emit = emit
        self.splitter = InlineThinkSplitter(known=thinks_inline)
        self.tools: dict[int, ToolPart] = {}
        self.finish = "stop"
        self.usage = Usage()
        self.got_output = False
        self._open: TextPart | ReasoningPart | None = None
        self._open_index = -1
        self._dirty: set[int] = set()
        self._flushed = time.monotonic()
        self._timer: asyncio.TimerHandle | None = None

    # parts ------------------------------------------------------------------------------------

    def _index(self, part: Part) -> int:
        for i, existing in enumerate(self.message.parts):
            if existing is part:
                return i
        raise ValueError("part not in message")

    def _append(self, part: Part) -> int:
        self.message.parts.append(part)
        index = len(self.message.parts) - 1
        self.store.save_part(self.message.id, index, part)
        return index

    def save(self, part: Part) -> None:
        self.store.save_part(self.message.id, self._index(part), part)

    def _grow(self, kind: type[TextPart] | type[ReasoningPart], text: str) -> None:
        if not text:
            return
        self.got_output = True
        if not isinstance(self._open, kind):
            self._open = kind(text="")
            self._open_index = self._append(self._open)
        self._open.text += text
        self._dirty.add(self._open_index)
        self.emit(TextDelta(text) if kind is TextPart else ReasoningDelta(text))
        now = time.monotonic()
        if now - self._flushed >= FLUSH_EVERY:
            self.flush()
        elif self._timer is None:
            # the stream may go quiet now: write the rest soon anyway, not at the step's end
            self._timer = asyncio.get_running_loop().call_later(FLUSH_EVERY, self.flush)

    def _sign(self, kind: type[TextPart] | type[ReasoningPart], signature: str) -> None:
        """A signature belongs to the open part of its kind; alone, it opens an empty one."""
        if not isinstance(self._open, kind):
            self._open = kind(text="")
            self._open_index = self._append(self._open)
        self._open.signature = signature
        self._dirty.add(self._open_index)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for index in sorted(self._dirty):
            self.store.save_part(self.message.id, index, self.message.parts[index])
        self._dirty.clear()
        self._flushed = time.monotonic()

    # stream events ----------------------------------------------------------------------------

    def on_event(self, event: StreamEvent) -> None:
        match event:
            case TextChunk(text=text, signature=signature):
                if self.splitter is None:
                    self._grow(TextPart, text)
                else:
                    for kind, piece in self.splitter.feed(text):
                        self._grow(TextPart if kind == "text" else ReasoningPart, piece)
                if signature:
                    self._sign(TextPart, signature)
            case ReasoningChunk(text=text, signature=signature, redacted_data=redacted):
                if redacted is not None:  # a block of its own: what follows starts anew
                    self.got_output = True
                    self._append(ReasoningPart(text="", redacted_data=redacted))
                    self._open = None
                self._grow(ReasoningPart, text)
                if signature:  # a signature closes its reasoning block
                    self._sign(ReasoningPart, signature)
                    self._open = None
            case ToolCallBegin(index=index, call_id=call_id, name=name, signature=signature):
                self.got_output = True
                part = ToolPart(
                    call_id=call_id or f"call_{self.message.id}_{index}",
                    name=name,
                    signature=signature,
                    from_text=event.from_text,
                    meta=dict(event.meta) if event.meta else None,
                )
                self.tools[index] = part
                self._open = None
                self._append(part)
            case ToolArgsChunk(index=index, text=text):
                if index in self.tools:
                    self.tools[index].raw_input += text
            case UsageReport(usage=usage):
                self.usage = usage
            case StreamEnd(reason=reason):
                self.finish = reason
            case _:
                assert_never(event)

    def end(self) -> list[ToolPart]:
        """The step is over: release held text, parse tool inputs, write everything."""
        if self.splitter is not None:
            for kind, piece in self.splitter.flush():
                self._grow(TextPart if kind == "text" else ReasoningPart, piece)
        self.flush()
        for part in self.tools.values():
            try:
                parsed = json.loads(part.raw_input or "{}")
                part.input = parsed if isinstance(parsed, dict) else None
            except json.JSONDecodeError:
                part.input = None
            self.save(part)
        self.message.usage = self.usage
        self.message.finish = self.finish
        self.store.finish_message(self.message)
        return list(self.tools.values())
