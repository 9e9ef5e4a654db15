"""The AWS event-stream codec, checked against botocore's decoder and aimock's encoder."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import struct
import subprocess
import zlib
from collections.abc import AsyncIterator

import pytest

from tests.support.aimock import AIMOCK_DIR
from totem.providers.transport.eventstream import (
    EventMessage,
    EventStreamDecoder,
    EventStreamError,
    HeaderValue,
    aiter_messages,
    encode_event,
    encode_exception,
    encode_message,
)

botocore_eventstream = pytest.importorskip("botocore.eventstream")

HEADERS: dict[str, HeaderValue] = {
    ":event-type": "contentBlockDelta",
    "flag-on": True,
    "flag-off": False,
    "small": 7,
    "negative": -42,
    "big": 2**40,
    "blob": b"\x00\x01\xff",
    "unicode": "caf\u00e9 \u2615",
}
PAYLOAD = json.dumps({"delta": {"text": "h\u00e9llo"}, "contentBlockIndex": 0}).encode()


def decode_all(data: bytes, *, step: int | None = None) -> list[EventMessage]:
    decoder = EventStreamDecoder()
    messages: list[EventMessage] = []
    size = step or len(data) or 1
    for start in range(0, len(data), size):
        messages += decoder.feed(data[start : start + size])
    decoder.close()
    return messages


def test_round_trip_of_every_header_type() -> None:
    frame = encode_message(HEADERS, PAYLOAD)
    [message] = decode_all(frame)
    assert message.headers == HEADERS and message.payload == PAYLOAD
    assert message.json() == json.loads(PAYLOAD)
    assert message.header(":event-type") == "contentBlockDelta" and message.header("small") == ""


def test_split_anywhere_even_one_byte_at_a_time() -> None:
    stream = b"".join(encode_event("e", {"n": n}) for n in range(5))
    for step in (1, 3, 11, 16, 100):
        messages = decode_all(stream, step=step)
        assert [m.json()["n"] for m in messages] == list(range(5))
        assert all(m.message_type == "event" and m.header(":event-type") == "e"
                   for m in messages)


def test_empty_payload_and_no_headers() -> None:
    [message] = decode_all(encode_message({}, b""))
    assert message.headers == {} and message.payload == b"" and message.json() == {}
    assert message.message_type == "event"


def test_botocore_decodes_our_frames_exactly() -> None:
    buffer = botocore_eventstream.EventStreamBuffer()
    buffer.add_data(encode_message(HEADERS, PAYLOAD))
    buffer.add_data(encode_exception("throttlingException", "Too many requests"))
    first, second = list(buffer)
    assert first.headers == HEADERS and first.payload == PAYLOAD
    assert second.headers == {":content-type": "application/json",
                              ":exception-type": "throttlingException",
                              ":message-type": "exception"}
    assert json.loads(second.payload) == {"message": "Too many requests"}


def test_botocore_decodes_a_chunked_stream_like_ours() -> None:
    stream = b"".join(encode_event("messageStop", {"stopReason": n}) for n in "abc")
    buffer = botocore_eventstream.EventStreamBuffer()
    theirs = []
    for start in range(0, len(stream), 7):
        buffer.add_data(stream[start : start + 7])
        theirs += [(m.headers, m.payload) for m in buffer]
    ours = [(m.headers, m.payload) for m in decode_all(stream, step=7)]
    assert theirs == ours and len(ours) == 3


def test_a_flipped_payload_byte_fails_the_message_crc() -> None:
    frame = bytearray(encode_event("e", {"text": "hello"}))
    frame[-6] ^= 0x01
    with pytest.raises(EventStreamError, match="message CRC"):
        decode_all(bytes(frame))
    buffer = botocore_eventstream.EventStreamBuffer()  # botocore agrees that it is broken
    buffer.add_data(bytes(frame))
    with pytest.raises(botocore_eventstream.ChecksumMismatch):
        list(buffer)


def test_a_flipped_length_fails_the_prelude_crc_at_once() -> None:
    frame = bytearray(encode_event("e", {}))
    frame[3] ^= 0x10
    with pytest.raises(EventStreamError, match="prelude CRC"):
        EventStreamDecoder().feed(bytes(frame[:12]))  # no waiting for the rest


def test_text_that_is_no_event_stream_is_refused() -> None:
    with pytest.raises(EventStreamError, match="prelude CRC"):
        EventStreamDecoder().feed(b'{"message": "not a stream"}')


def test_impossible_lengths_are_refused_even_with_a_good_crc() -> None:
    prelude = struct.pack(">II", 10, 0)
    bad = prelude + struct.pack(">I", zlib.crc32(prelude))
    with pytest.raises(EventStreamError, match="impossible lengths"):
        EventStreamDecoder().feed(bad)


def test_a_stream_cut_inside_a_message_is_an_error_at_close() -> None:
    frame = encode_event("e", {"text": "hello"})
    decoder = EventStreamDecoder()
    assert decoder.feed(frame + frame[:20]) != [] and decoder.pending == 20
    with pytest.raises(EventStreamError, match="20 bytes left"):
        decoder.close()


def test_aiter_messages_over_async_chunks() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        data = encode_event("a", {}) + encode_event("b", {})
        for start in range(0, len(data), 5):
            yield data[start : start + 5]

    async def main() -> list[str]:
        return [m.header(":event-type") async for m in aiter_messages(chunks())]

    assert asyncio.run(main()) == ["a", "b"]


def test_bytes_identical_to_aimocks_encoder() -> None:
    """aimock's Node encoder (what the simulator streams) and ours write the same bytes."""
    node = shutil.which("node")
    module = AIMOCK_DIR / "dist" / "aws-event-stream.js"
    if node is None or not module.is_file():
        pytest.skip("node or aimock is not installed")
    payload = {"contentBlockIndex": 1, "delta": {"toolUse": {"input": "{\"city\": \"S\u00e3o\"}"}}}
    script = (
        f"import({json.dumps(module.as_uri())}).then(m => process.stdout.write("
        f"m.encodeEventStreamMessage('contentBlockDelta', {json.dumps(payload)})"
        ".toString('base64')))"
    )
    out = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=30,
                         check=True).stdout
    assert base64.b64decode(out) == encode_event("contentBlockDelta", payload)
