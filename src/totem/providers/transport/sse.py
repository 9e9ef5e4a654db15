"""A small incremental Server-Sent Events decoder, shared by every streaming adapter.

Feed it whatever the transport hands over (bytes or text, split anywhere, even inside a
UTF-8 sequence or between `\\r` and `\\n`); it returns the events completed so far:

    decoder = SSEDecoder()
    for chunk in chunks:
        for event in decoder.feed(chunk):
            ...
    last = decoder.flush()      # an event the server ended without a blank line

It follows the WHATWG rules (`event`, `data` (multi-line), `id`, `retry`, `:` comments,
lines ended by CRLF, LF or CR, a leading BOM) with one deliberate difference: a final event
that is not followed by a blank line is still delivered by `flush()`, because real servers
close the stream that way.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

__all__ = ["SSEDecoder", "SSEEvent", "aiter_sse"]


@dataclass(slots=True)
class SSEEvent:
    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._started = False
        self._skip_lf = False  # the last chunk ended in "\r": a "\n" that follows is its pair
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None
        self._retry: int | None = None

    def feed(self, chunk: bytes | str) -> list[SSEEvent]:
        """Decode one chunk; return the events it completed, in order."""
        text = self._utf8.decode(chunk) if isinstance(chunk, bytes) else chunk
        if not text:
            return []
        if not self._started:
            self._started = True
            if text.startswith("\ufeff"):
                text = text[1:]
        if self._skip_lf:
            self._skip_lf = False
            if text.startswith("\n"):
                text = text[1:]
        self._buffer += text
        events: list[SSEEvent] = []
        for line in self._complete_lines():
            event = self.feed_line(line)
            if event is not None:
                events.append(event)
        return events

    def _complete_lines(self) -> list[str]:
        buffer = self._buffer
        lines: list[str] = []
        start = 0
        size = len(buffer)
        while start < size:
            cr = buffer.find("\r", start)
            lf = buffer.find("\n", start)
            if cr < 0 and lf < 0:
                break
            if cr < 0 or (0 <= lf < cr):
                lines.append(buffer[start:lf])
                start = lf + 1
                continue
            lines.append(buffer[start:cr])
            if cr + 1 < size:
                start = cr + 2 if buffer[cr + 1] == "\n" else cr + 1
            else:
                start = cr + 1
                self._skip_lf = True
        self._buffer = buffer[start:]
        return lines

    def feed_line(self, line: str) -> SSEEvent | None:
        """Process one line without its terminator; a blank line dispatches the event."""
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry":
            if value.isdigit():
                self._retry = int(value)
        elif name == "error" and value.startswith("{"):
            # llama-server (llama.cpp before 2025-09) sends a failure inside a stream as an
            # `error:` field; it is passed on as the data of an error event, OpenAI's shape.
            self._data.append(f'{{"error": {value}}}')
            self._event = "error"
        return None

    def _dispatch(self) -> SSEEvent | None:
        event_name, self._event = self._event, ""
        retry, self._retry = self._retry, None
        if not self._data:
            return None
        data = "\n".join(self._data)
        self._data = []
        return SSEEvent(data=data, event=event_name or "message", id=self._last_id, retry=retry)

    def flush(self) -> SSEEvent | None:
        """End of stream: deliver a pending event that had no blank line after it."""
        tail = self._utf8.decode(b"", final=True)
        if tail:
            self._buffer += tail
        if self._buffer:
            line, self._buffer = self._buffer, ""
            self.feed_line(line)
        return self._dispatch()


async def aiter_sse(
    chunks: AsyncIterator[bytes] | AsyncIterator[str],
    *,
    until: str | None = None,
    on_until: Callable[[], object] | None = None,
    drain_timeout: float = 2.0,
) -> AsyncIterator[SSEEvent]:
    """The events of a byte or text stream, the unterminated last one included.

    With `until` (OpenAI's `[DONE]`), an event whose data is that sentinel ends the stream
    without being yielded (`on_until()` is called then: the stream came to its proper end);
    what follows is read for at most `drain_timeout` seconds, so that an HTTP connection
    can go back to its pool without waiting on a server that never closes.
    """
    decoder = SSEDecoder()
    async for chunk in chunks:
        for event in decoder.feed(chunk):
            if until is not None and event.data.strip() == until:
                if on_until is not None:
                    on_until()
                await _drain(chunks, drain_timeout)
                return
            yield event
    last = decoder.flush()
    if last is not None and (until is None or last.data.strip() != until):
        yield last


async def _drain(chunks: AsyncIterator[bytes] | AsyncIterator[str], timeout: float) -> None:
    async def read_rest() -> None:
        async for _ in chunks:
            pass

    try:
        await asyncio.wait_for(read_rest(), timeout)
    except Exception:  # the answer is complete; what follows it does not matter
        close = getattr(chunks, "aclose", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()
