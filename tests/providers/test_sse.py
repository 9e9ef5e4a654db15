from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from totem.providers.transport.sse import SSEDecoder, SSEEvent, aiter_sse


def decode(chunks: Sequence[bytes | str]) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    last = decoder.flush()
    if last is not None:
        events.append(last)
    return events


def test_data_events_and_blank_line_dispatch() -> None:
    events = decode([b"data: one\n\ndata: two\n\n"])
    assert [e.data for e in events] == ["one", "two"]
    assert all(e.event == "message" for e in events)


def test_crlf_and_cr_line_endings() -> None:
    assert [e.data for e in decode([b"data: a\r\n\r\ndata: b\r\rdata: c\n\n"])] == ["a", "b", "c"]


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    events = decode([b"data: a\r", b"\n\r", b"\ndata: b\r\n", b"\r\n"])
    assert [e.data for e in events] == ["a", "b"]


def test_multi_line_data_joined_with_newlines() -> None:
    events = decode(["data: first\ndata: second\ndata:third\n\n"])
    assert events[0].data == "first\nsecond\nthird"


def test_comments_are_ignored() -> None:
    events = decode([": keep-alive\n\n: OPENROUTER PROCESSING\n\ndata: x\n: mid\n\n"])
    assert [e.data for e in events] == ["x"]


def test_event_id_and_retry_fields() -> None:
    events = decode(["event: delta\nid: 7\nretry: 1500\ndata: {}\n\ndata: y\n\n"])
    assert (events[0].event, events[0].id, events[0].retry) == ("delta", "7", 1500)
    # the event name resets, the last id carries over (WHATWG)
    assert (events[1].event, events[1].id, events[1].retry) == ("message", "7", None)


def test_event_without_data_is_not_dispatched() -> None:
    assert decode(["event: ping\n\ndata: z\n\n"])[0].data == "z"


def test_final_event_without_blank_line_is_flushed() -> None:
    assert [e.data for e in decode([b"data: a\n\ndata: last"])] == ["a", "last"]
    assert [e.data for e in decode([b"data: last\n"])] == ["last"]


def test_utf8_split_inside_a_character_and_bom() -> None:
    raw = "\ufeffdata: héllo ✓\n\n".encode()
    chunks = [raw[i : i + 1] for i in range(len(raw))]
    assert decode(chunks)[0].data == "héllo ✓"


def test_value_without_space_and_field_without_colon() -> None:
    events = decode(["data:tight\ndata\n\n"])
    assert events[0].data == "tight\n"


def test_aiter_sse_stops_at_sentinel_and_drains_the_rest() -> None:
    consumed: list[bytes] = []

    async def chunks() -> AsyncIterator[bytes]:
        for chunk in [b"data: 1\n\n", b"data: [DONE]\n\n", b"data: after\n\n"]:
            consumed.append(chunk)
            yield chunk

    async def main() -> list[str]:
        return [e.data async for e in aiter_sse(chunks(), until="[DONE]")]

    assert asyncio.run(main()) == ["1"]
    assert len(consumed) == 3  # read to the end, so a connection could be reused


def test_aiter_sse_does_not_wait_forever_after_the_sentinel() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b"data: 1\n\ndata: [DONE]\n\n"
        await asyncio.sleep(30)
        yield b""

    async def main() -> list[str]:
        return [e.data async for e in aiter_sse(chunks(), until="[DONE]", drain_timeout=0.05)]

    assert asyncio.run(main()) == ["1"]
