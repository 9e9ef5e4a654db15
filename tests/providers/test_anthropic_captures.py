"""Real recorded Anthropic streams, read by our adapter and by the official SDK, compared.

Every capture the `anthropic` sdist ships (tests/support/anthropic_captures.py fetches them)
is served, byte for byte, to `AnthropicProvider` through an `httpx.MockTransport` (cut into
7-byte pieces, so that the SSE decoder meets every split) and to the SDK's own
`messages.stream(...)` accumulator through an `httpx2.MockTransport`, the SDK's transport
seam. Both must see the same text, thinking, tool calls and inputs, stop reason and usage;
where the SDK refuses a tool's JSON we pass the same text on, which then fails to parse.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.anthropic_captures import require_captures
from totem.messages import Message, TextPart, Usage
from totem.providers.anthropic import AnthropicProvider
from totem.providers.base import (
    ModelRequest,
    ProviderError,
    ReasoningChunk,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
    UsageReport,
)

try:  # the SDK and its own parts: test dependencies (tests/requirements-providers.txt)
    import anthropic
    import httpx2
    import jiter
except ImportError as exc:
    if os.environ.get("TOTEM_REQUIRE_SERVERS") == "1":
        raise
    pytest.skip(f"the anthropic SDK is not installed: {exc}", allow_module_level=True)

MODEL = "claude-opus-4-7"

# Our own capture, in the API's shape: the sdist has no thinking stream. Thinking, a
# redacted block, a signature, a second thinking block after a tool call (interleaved).
THINKING_CAPTURE = "\n".join(
    f"event: {json.loads(line)['type']}\ndata: {line}\n" for line in [
        '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",'
        '"content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,'
        '"usage":{"input_tokens":12,"cache_read_input_tokens":100,'
        '"cache_creation_input_tokens":7,"output_tokens":1}}}',
        '{"type":"content_block_start","index":0,"content_block":{"type":"thinking",'
        '"thinking":"","signature":""}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta",'
        '"thinking":"Let me look "}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta",'
        '"thinking":"at the file."}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta",'
        '"signature":"EqQBCkYIBxgCKkB0c2lnMQ=="}}',
        '{"type":"content_block_stop","index":0}',
        '{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking",'
        '"data":"EmwKAhgBEgy3redacted"}}',
        '{"type":"content_block_stop","index":1}',
        '{"type":"content_block_start","index":2,"content_block":{"type":"tool_use",'
        '"id":"toolu_01A","name":"read","input":{}}}',
        '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta",'
        '"partial_json":"{\\"path\\": \\"é.py\\"}"}}',
        '{"type":"content_block_stop","index":2}',
        '{"type":"content_block_start","index":3,"content_block":{"type":"thinking",'
        '"thinking":"","signature":""}}',
        '{"type":"content_block_delta","index":3,"delta":{"type":"thinking_delta",'
        '"thinking":"And the test."}}',
        '{"type":"content_block_delta","index":3,"delta":{"type":"signature_delta",'
        '"signature":"EqQBCkYIBxgCKkB0c2lnMg=="}}',
        '{"type":"content_block_stop","index":3}',
        '{"type":"content_block_start","index":4,"content_block":{"type":"tool_use",'
        '"id":"toolu_01B","name":"read","input":{}}}',
        '{"type":"content_block_delta","index":4,"delta":{"type":"input_json_delta",'
        '"partial_json":"{\\"path\\": \\"test_a.py\\"}"}}',
        '{"type":"content_block_stop","index":4}',
        '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},'
        '"usage":{"output_tokens":80}}',
        '{"type":"message_stop"}',
    ]
).encode()


@dataclass
class Seen:
    """What one reader made of a stream, in the same terms for both readers."""

    text: str = ""
    thinking: list[str] = field(default_factory=list)
    signatures: list[str] = field(default_factory=list)
    redacted: list[str] = field(default_factory=list)
    calls: list[tuple[str, str, str]] = field(default_factory=list)  # id, name, raw arguments
    stop_reason: str | None = None
    usage: Usage | None = None
    error: Exception | None = None
    events: list[StreamEvent] = field(default_factory=list)


# -- our adapter -------------------------------------------------------------------------------


async def _pieces(raw: bytes, size: int = 7) -> AsyncIterator[bytes]:
    for start in range(0, len(raw), size):
        yield raw[start:start + size]


def ours(raw: bytes) -> Seen:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=_pieces(raw))

    async def main() -> Seen:
        seen = Seen()
        provider = AnthropicProvider("captures", "http://captures.invalid", api_key="sk-test",
                                     transport=httpx.MockTransport(handler))
        message = Message(id="m1", session_id="s", role="user", parts=[TextPart("Hello")])
        try:
            async for event in provider.stream(ModelRequest(MODEL, "", [message])):
                seen.events.append(event)
        except ProviderError as exc:
            seen.error = exc
        finally:
            await provider.aclose()
        return seen

    seen = asyncio.run(main())
    args: dict[int, str] = {}
    signed = True  # no thinking block is open
    for event in seen.events:
        match event:
            case TextChunk(text=text):
                seen.text += text
            case ReasoningChunk(text=text, signature=signature, redacted_data=redacted):
                if redacted is not None:
                    seen.redacted.append(redacted)
                if (text or signature) and signed:  # a new thinking block
                    seen.thinking.append("")
                    seen.signatures.append("")
                    signed = False
                if text:
                    seen.thinking[-1] += text
                if signature:  # the signature comes last and closes its block
                    seen.signatures[-1] = signature
                    signed = True
            case ToolCallBegin(index=index, call_id=call_id, name=name):
                args[index] = ""
                seen.calls.append((call_id, name, ""))
            case ToolArgsChunk(index=index, text=text):
                args[index] += text
            case UsageReport(usage=usage):
                seen.usage = usage
            case StreamEnd(raw=raw_reason):
                seen.stop_reason = raw_reason
    seen.calls = [(c, n, args[i]) for i, (c, n, _) in enumerate(seen.calls)]
    return seen


# -- the official SDK ------------------------------------------------------------------------


def sdk(raw: bytes) -> Seen:
    def handler(request: Any) -> Any:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=raw)

    seen = Seen()
    with httpx2.Client(transport=httpx2.MockTransport(handler)) as http:
        client = anthropic.Anthropic(api_key="sk-test", base_url="http://captures.invalid",
                                     http_client=http, max_retries=0)
        try:
            with client.messages.stream(model=MODEL, max_tokens=1024,
                                        messages=[{"role": "user", "content": "Hello"}]) as s:
                for event in s:  # the text as it streams, also when the stream then fails
                    if event.type == "text":
                        seen.text += event.text
                final = s.get_final_message()
        except ValueError as exc:
            seen.error = exc
            return seen
    assert seen.text == "".join(b.text for b in final.content if b.type == "text")
    for block in final.content:
        if block.type == "thinking":
            seen.thinking.append(block.thinking)
            seen.signatures.append(block.signature)
        elif block.type == "redacted_thinking":
            seen.redacted.append(block.data)
        elif block.type == "tool_use":
            seen.calls.append((block.id, block.name, json.dumps(block.input)))
    seen.stop_reason = final.stop_reason
    u = final.usage
    read, write = u.cache_read_input_tokens or 0, u.cache_creation_input_tokens or 0
    seen.usage = Usage(input=u.input_tokens + read + write, output=u.output_tokens,
                       cache_read=read, cache_write=write)
    return seen


# -- the comparison ----------------------------------------------------------------------------


def captures() -> list[Path]:
    return sorted(require_captures().glob("*.txt"))


def test_the_sdist_ships_the_captures_we_rely_on() -> None:
    names = {p.name for p in captures()}
    assert {"basic_response.txt", "tool_use_response.txt", "tool_use_invalid_json_response.txt",
            "incomplete_partial_json_response.txt", "unknown_events_response.txt",
            "refusal_response.txt"} <= names


def compare(raw: bytes) -> tuple[Seen, Seen]:
    mine, theirs = ours(raw), sdk(raw)
    assert mine.error is None, mine.error
    ends = [e for e in mine.events if isinstance(e, StreamEnd)]
    assert len(ends) == 1 and mine.events[-1] is ends[0]
    begun: set[int] = set()
    for event in mine.events:  # a call's arguments never come before the call
        if isinstance(event, ToolCallBegin):
            begun.add(event.index)
        elif isinstance(event, ToolArgsChunk):
            assert event.index in begun
    assert mine.text == theirs.text
    if theirs.error is not None:  # the SDK refuses the tool JSON that we hand on as it came
        raw_args = mine.calls[-1][2]
        assert str(theirs.error).endswith(f"JSON: {raw_args}")
        with pytest.raises(json.JSONDecodeError):
            json.loads(raw_args)
        return mine, theirs
    assert (mine.thinking, mine.signatures, mine.redacted) == (
        theirs.thinking, theirs.signatures, theirs.redacted)
    # The SDK parses tool input as it streams, tolerating a cut end (jiter's partial mode);
    # the same parse of the raw text we pass on gives the same input.
    assert [(c, n, jiter.from_json((a or "{}").encode(), partial_mode=True))
            for c, n, a in mine.calls] == [(c, n, json.loads(a)) for c, n, a in theirs.calls]
    assert mine.stop_reason == theirs.stop_reason
    assert mine.usage is not None and theirs.usage is not None
    assert (mine.usage.input, mine.usage.output, mine.usage.cache_read,
            mine.usage.cache_write) == (theirs.usage.input, theirs.usage.output,
                                        theirs.usage.cache_read, theirs.usage.cache_write)
    return mine, theirs


def test_every_capture_reads_the_same_as_the_sdk() -> None:
    compared = []
    for path in captures():
        try:
            compare(path.read_bytes())
        except AssertionError as exc:
            raise AssertionError(f"{path.name}: {exc}") from exc
        compared.append(path.name)
    assert len(compared) >= 10


def read(name: str) -> tuple[Seen, Seen]:
    return compare((require_captures() / name).read_bytes())


def test_tool_use_capture() -> None:
    mine, _ = read("tool_use_response.txt")
    assert mine.calls == [("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather",
                           '{"location": "Paris"}')]
    assert mine.text == "I'll check the current weather in Paris for you."
    assert mine.events[-1] == StreamEnd("tool_calls", "tool_use")
    assert mine.usage == Usage(input=377, output=65)


def test_invalid_tool_json_is_passed_on_and_the_sdk_refuses_it() -> None:
    mine, theirs = read("tool_use_invalid_json_response.txt")
    assert isinstance(theirs.error, ValueError)
    assert mine.calls[0][2] == '{"location": "Paris", "unit": celsius}'
    assert mine.events[-1] == StreamEnd("tool_calls", "tool_use")


def test_a_tool_call_cut_by_max_tokens_ends_for_length() -> None:
    mine, theirs = read("incomplete_partial_json_response.txt")
    assert mine.events[-1] == StreamEnd("length", "max_tokens")  # the loop will continue
    assert mine.calls[0][2].endswith('\n"Filing taxes')
    assert theirs.calls[0][2].endswith('"## INTRODUCTION", ""]}')


def test_refusal_and_unknown_events() -> None:
    refusal, _ = read("refusal_response.txt")
    assert refusal.events[-1] == StreamEnd("other", "refusal") and refusal.text == ""
    unknown, _ = read("unknown_events_response.txt")
    assert unknown.text == "Hello there!" and unknown.events[-1] == StreamEnd("stop", "end_turn")
    assert unknown.usage == Usage(input=11, output=6)  # the future_event's 99s are not taken


def test_server_tools_are_not_our_tool_calls() -> None:
    mine, theirs = read("server_tool_use_response.txt")
    assert not mine.calls and not theirs.calls
    assert mine.text.startswith("Claude O")


def test_cache_usage_is_counted_in_the_input() -> None:
    mine, _ = read("message_delta_fields_response.txt")
    # message_delta carries running totals: they replace message_start's numbers
    assert mine.usage == Usage(input=40 + 7 + 12, output=8, cache_read=7, cache_write=12,
                               reasoning=3)


def test_thinking_redacted_and_signatures_as_the_sdk_reads_them() -> None:
    mine, theirs = compare(THINKING_CAPTURE)
    assert mine.thinking == ["Let me look at the file.", "And the test."]
    assert mine.signatures == ["EqQBCkYIBxgCKkB0c2lnMQ==", "EqQBCkYIBxgCKkB0c2lnMg=="]
    assert mine.redacted == ["EmwKAhgBEgy3redacted"]
    assert [json.loads(a) for _, _, a in mine.calls] == [{"path": "é.py"},
                                                         {"path": "test_a.py"}]
    assert mine.usage == Usage(input=119, output=80, cache_read=100, cache_write=7)
    assert theirs.stop_reason == "tool_use"
