"""The AWS event-stream framing (`application/vnd.amazon.eventstream`), both ways.

Bedrock streams its answer as binary messages, each one framed like this (big-endian):

    total length     uint32   the whole message, these 4 bytes and the final CRC included
    headers length   uint32
    prelude CRC32    uint32   of the 8 bytes above
    headers          per header: name length uint8, name (UTF-8), value type uint8, value
    payload          bytes (JSON for Bedrock)
    message CRC32    uint32   of everything before it

Header value types: 0 true, 1 false, 2 int8, 3 int16, 4 int32, 5 int64, 6 bytes and
7 string (each after a uint16 length), 8 timestamp (int64 milliseconds), 9 UUID (16 bytes).

`EventStreamDecoder.feed(chunk)` takes bytes split anywhere and returns the messages they
completed; both CRCs are checked and a broken frame raises `EventStreamError`. The encoder
(`encode_message`, `encode_event`, `encode_exception`) is for tests and our fake servers;
botocore decodes what it writes, byte for byte the way it decodes AWS's own streams.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = [
    "EventMessage",
    "EventStreamDecoder",
    "EventStreamError",
    "HeaderValue",
    "aiter_messages",
    "encode_event",
    "encode_exception",
    "encode_message",
]

HeaderValue: TypeAlias = bool | int | str | bytes

_PRELUDE = 12  # total length, headers length, prelude CRC
_MIN_MESSAGE = _PRELUDE + 4
MAX_HEADERS = 128 * 1024  # the limits botocore enforces
MAX_PAYLOAD = 16 * 1024 * 1024
_FIXED = {2: ">b", 3: ">h", 4: ">i", 5: ">q", 8: ">q"}  # type -> struct format


class EventStreamError(ValueError):
    """The bytes are not a valid event stream (bad CRC, impossible length, cut frame)."""


@dataclass(frozen=True, slots=True)
class EventMessage:
    headers: dict[str, HeaderValue]
    payload: bytes

    @property
    def message_type(self) -> str:
        """`event`, `exception` or `error` (`event` when the header is missing)."""
        value = self.headers.get(":message-type", "event")
        return value if isinstance(value, str) else "event"

    def header(self, name: str) -> str:
        """A string header, or "" when it is missing or not a string."""
        value = self.headers.get(name)
        return value if isinstance(value, str) else ""

    def json(self) -> Any:
        """The payload parsed as JSON (an empty payload is `{}`); ValueError when it is not."""
        return json.loads(self.payload) if self.payload else {}


def _crc(data: bytes | bytearray | memoryview) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


class EventStreamDecoder:
    """Incremental decoder: `feed` chunks as they arrive, `close` at the end of the stream."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    @property
    def pending(self) -> int:
        """Bytes received that do not yet make a whole message."""
        return len(self._buffer)

    def feed(self, chunk: bytes) -> list[EventMessage]:
        """Add `chunk`; return the messages it completed, in order."""
        self._buffer += chunk
        messages: list[EventMessage] = []
        while len(self._buffer) >= _PRELUDE:
            total, headers_length, prelude_crc = struct.unpack_from(">III", self._buffer)
            if _crc(memoryview(self._buffer)[:8]) != prelude_crc:
                raise EventStreamError(
                    f"prelude CRC mismatch (expected {prelude_crc:#010x}); not an event stream?"
                )
            if headers_length > MAX_HEADERS:
                raise EventStreamError(f"headers of {headers_length} bytes exceed the limit")
            payload_length = total - _MIN_MESSAGE - headers_length
            if total < _MIN_MESSAGE or payload_length < 0 or payload_length > MAX_PAYLOAD:
                raise EventStreamError(
                    f"impossible lengths: total {total}, headers {headers_length}"
                )
            if len(self._buffer) < total:
                break
            frame = bytes(self._buffer[:total])
            del self._buffer[:total]
            messages.append(_parse(frame, headers_length))
        return messages

    def close(self) -> None:
        """The stream ended: raise `EventStreamError` when it ended inside a message."""
        if self._buffer:
            left = len(self._buffer)
            self._buffer.clear()
            raise EventStreamError(f"the stream ended inside a message ({left} bytes left)")


def _parse(frame: bytes, headers_length: int) -> EventMessage:
    (expected,) = struct.unpack_from(">I", frame, len(frame) - 4)
    actual = _crc(memoryview(frame)[:-4])
    if actual != expected:
        raise EventStreamError(f"message CRC mismatch ({actual:#010x} != {expected:#010x})")
    end = _PRELUDE + headers_length
    headers = _parse_headers(frame[_PRELUDE:end])
    return EventMessage(headers=headers, payload=frame[end:-4])


def _parse_headers(data: bytes) -> dict[str, HeaderValue]:
    headers: dict[str, HeaderValue] = {}
    offset = 0
    try:
        while offset < len(data):
            name_length = data[offset]
            name = data[offset + 1 : offset + 1 + name_length].decode("utf-8")
            offset += 1 + name_length
            kind = data[offset]
            offset += 1
            value: HeaderValue
            if kind in (0, 1):
                value = kind == 0
            elif kind in _FIXED:
                fmt = _FIXED[kind]
                (value,) = struct.unpack_from(fmt, data, offset)
                offset += struct.calcsize(fmt)
            elif kind in (6, 7):
                (length,) = struct.unpack_from(">H", data, offset)
                raw = data[offset + 2 : offset + 2 + length]
                if len(raw) != length:
                    raise EventStreamError(f"header {name!r} is cut short")
                value = raw.decode("utf-8") if kind == 7 else raw
                offset += 2 + length
            elif kind == 9:
                value = data[offset : offset + 16]
                if len(value) != 16:
                    raise EventStreamError(f"header {name!r} is cut short")
                offset += 16
            else:
                raise EventStreamError(f"header {name!r} has unknown value type {kind}")
            headers[name] = value
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise EventStreamError(f"malformed headers: {exc}") from None
    return headers


async def aiter_messages(chunks: AsyncIterable[bytes]) -> AsyncIterator[EventMessage]:
    """The messages of a byte stream; `EventStreamError` when it is broken or cut."""
    decoder = EventStreamDecoder()
    async for chunk in chunks:
        for message in decoder.feed(chunk):
            yield message
    decoder.close()


# -- encoding ---------------------------------------------------------------------------------


def _encode_header(name: str, value: HeaderValue) -> bytes:
    raw_name = name.encode("utf-8")
    head = struct.pack(">B", len(raw_name)) + raw_name
    if isinstance(value, bool):
        return head + struct.pack(">B", 0 if value else 1)
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return head + struct.pack(">Bi", 4, value)
        return head + struct.pack(">Bq", 5, value)
    raw = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    return head + struct.pack(">BH", 7 if isinstance(value, str) else 6, len(raw)) + raw


def encode_message(headers: Mapping[str, HeaderValue], payload: bytes) -> bytes:
    """One framed message: `headers` in the order given, then `payload`."""
    raw_headers = b"".join(_encode_header(k, v) for k, v in headers.items())
    total = _MIN_MESSAGE + len(raw_headers) + len(payload)
    prelude = struct.pack(">II", total, len(raw_headers))
    body = prelude + struct.pack(">I", _crc(prelude)) + raw_headers + payload
    return body + struct.pack(">I", _crc(body))


def _json(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def encode_event(event_type: str, payload: Any) -> bytes:
    """A JSON event with the standard headers (in aimock's order, so the bytes match)."""
    headers = {":content-type": "application/json", ":event-type": event_type,
               ":message-type": "event"}
    return encode_message(headers, _json(payload))


def encode_exception(exception_type: str, message: str) -> bytes:
    """An exception message, e.g. `encode_exception("throttlingException", "slow down")`."""
    headers = {":content-type": "application/json", ":exception-type": exception_type,
               ":message-type": "exception"}
    return encode_message(headers, _json({"message": message}))
