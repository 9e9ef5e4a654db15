"""OpenAIChatProvider against the real aimock simulator (npm @copilotkit/aimock).

What aimock's failure modes do on the wire, and what the adapter makes of them:
- an error fixture with status 429 answers JSON with `Retry-After` -> RateLimited, retried;
- chaos `disconnect` destroys the socket before any byte -> a network error, retried;
- `disconnectAfterMs` cuts an event stream mid-way -> retried when nothing was shown yet,
  raised when text was already shown;
- chaos `malformed` answers 200 `application/json` with `{malformed json: <<<chaos>>>` instead
  of a stream -> RetryableError("malformed response ..."), retried;
- chaos `ratelimit` / `drop` (here asked for by request header) -> 429 with Retry-After: 1 / 500.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.support import streams
from tests.support.aimock import Aimock, aimock_fixture, fixture
from tests.support.streams import stream_events, texts
from totem.providers.base import (
    AuthError,
    ModelRequest,
    RateLimited,
    ReasoningChunk,
    RetryableError,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
    UsageReport,
)
from totem.providers.openai_chat import OpenAIChatProvider

pytestmark = pytest.mark.aimock

MODEL = "totem-test"  # a name aimock does not know: it counts as reasoning-capable
KEY = "sk-aimock-SECRET-42"


def slow(cut_after_ms: int) -> dict[str, Any]:
    """One chunk at once, then one every 250 ms; the connection dies after `cut_after_ms`."""
    return {"streamingProfile": {"ttft": 0, "tps": 4}, "disconnectAfterMs": cut_after_ms}


FIXTURES = [
    fixture("say hello", {"content": "Hello from aimock, streamed in small chunks.",
                          "usage": {"prompt_tokens": 11, "completion_tokens": 9,
                                    "total_tokens": 20}}),
    fixture("weather", {"toolCalls": [
        {"name": "get_weather", "arguments": {"city": "San Francisco", "unit": "celsius"}},
        {"name": "get_time", "arguments": {"tz": "America/Los_Angeles"}}]}),
    fixture("ponder", {"reasoning": "The user wants me to think first.", "content": "Done."}),
    fixture("limited", {"error": {"message": "Rate limit reached for requests",
                                  "type": "rate_limit_error"}, "status": 429, "retryAfter": 0}, 0),
    fixture("limited", {"content": "after the limit"}, 1),
    fixture("drops", {"content": "never sent"}, 0, chaos={"disconnectRate": 1}),
    fixture("drops", {"content": "reconnected"}, 1),
    fixture("cut early", {"content": "This text never arrives."}, 0, **slow(100)),
    fixture("cut early", {"content": "second try"}, 1),
    fixture("cut late", {"content": "The first words arrive, the rest does not."}, **slow(400)),
    fixture("garbled", {"content": "never parsed"}, 0, chaos={"malformedRate": 1}),
    fixture("garbled", {"content": "clean again"}, 1),
    fixture("garbled once", {"content": "never parsed"}, chaos={"malformedRate": 1}),
    {"match": {}, "response": {"content": "catch-all"}},
]

aimock = aimock_fixture(FIXTURES)
aimock_auth = aimock_fixture(FIXTURES, env={"AIMOCK_API_KEYS": "sk-the-right-one"},
                             name="aimock_auth")


def ask(text: str) -> ModelRequest:
    return streams.ask(text, model=MODEL)


def run(
    server: Aimock,
    text: str,
    *,
    tries: int = 10,
    key: str | None = None,
    headers: dict[str, str] | None = None,
    seen: list[StreamEvent] | None = None,
) -> tuple[list[StreamEvent], list[RetryableError]]:
    """Stream `text` through the retry policy; events also land in `seen` as they come."""
    return stream_events(
        lambda: OpenAIChatProvider("aimock", server.url, api_key=key, headers=headers),
        ask(text), tries=tries, seen=seen)


def test_streamed_text_with_usage(aimock: Aimock) -> None:
    events, retries = run(aimock, "say hello")
    assert texts(events) == "Hello from aimock, streamed in small chunks."
    assert sum(isinstance(e, TextChunk) for e in events) > 1  # chunks, as they came
    usage = [e for e in events if isinstance(e, UsageReport)]
    assert len(usage) == 1 and (usage[0].usage.input, usage[0].usage.output) == (11, 9)
    assert events[-1] == StreamEnd("stop", "stop") and not retries


def test_streamed_tool_calls_with_arguments(aimock: Aimock) -> None:
    events, _ = run(aimock, "what is the weather")
    begins = [e for e in events if isinstance(e, ToolCallBegin)]
    assert [(b.index, b.name) for b in begins] == [(0, "get_weather"), (1, "get_time")]
    assert all(b.call_id.startswith("call_") for b in begins)
    args = {i: "".join(e.text for e in events if isinstance(e, ToolArgsChunk) and e.index == i)
            for i in (0, 1)}
    assert json.loads(args[0]) == {"city": "San Francisco", "unit": "celsius"}
    assert json.loads(args[1]) == {"tz": "America/Los_Angeles"}
    assert events[-1] == StreamEnd("tool_calls", "tool_calls")


def test_reasoning_content_becomes_reasoning_chunks(aimock: Aimock) -> None:
    events, _ = run(aimock, "ponder this")
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningChunk))
    assert reasoning == "The user wants me to think first."
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextChunk))
    assert all(isinstance(e, ReasoningChunk) for e in events[:first_text])
    assert texts(events) == "Done."


def test_429_then_success_is_retried(aimock: Aimock) -> None:
    events, retries = run(aimock, "limited")
    assert texts(events) == "after the limit"
    assert len(retries) == 1 and isinstance(retries[0], RateLimited)
    assert retries[0].retry_after == 0 and "Rate limit reached" in retries[0].message


def test_a_disconnect_before_any_byte_is_retried(aimock: Aimock) -> None:
    events, retries = run(aimock, "drops")
    assert texts(events) == "reconnected"
    assert len(retries) == 1 and retries[0].message.startswith("network:")


def test_a_stream_cut_before_output_is_retried(aimock: Aimock) -> None:
    events, retries = run(aimock, "cut early")
    assert texts(events) == "second try"
    assert len(retries) == 1 and retries[0].message.startswith("network:")


def test_a_stream_cut_after_output_raises_and_keeps_what_was_shown(aimock: Aimock) -> None:
    seen: list[StreamEvent] = []
    with pytest.raises(RetryableError, match="network") as raised:
        run(aimock, "cut late", seen=seen)
    shown = texts(seen)
    assert shown and "The first words arrive, the rest does not.".startswith(shown)
    assert shown != "The first words arrive, the rest does not."
    assert not any(isinstance(e, StreamEnd) for e in seen)
    assert raised.value.message.startswith("network:")


def test_a_malformed_answer_is_a_clear_retryable_error(aimock: Aimock) -> None:
    events, retries = run(aimock, "garbled")
    assert texts(events) == "clean again"
    assert len(retries) == 1 and "malformed response" in retries[0].message
    with pytest.raises(RetryableError, match="malformed response.*<<<chaos>>>"):
        run(aimock, "garbled once", tries=1)


def test_chaos_headers_rate_limit_and_drop(aimock: Aimock) -> None:
    with pytest.raises(RateLimited) as limited:
        run(aimock, "say hello", tries=1, headers={"x-aimock-chaos-ratelimit": "1"})
    assert limited.value.status == 429 and limited.value.retry_after == 1.0
    with pytest.raises(RetryableError) as dropped:
        run(aimock, "say hello", tries=1, headers={"x-aimock-chaos-drop": "1"})
    assert dropped.value.status == 500 and "request dropped" in dropped.value.message


def test_authorization_header_only_when_a_key_is_set(aimock: Aimock) -> None:
    run(aimock, "say hello keyed", key=KEY)
    run(aimock, "say hello keyless")
    entries = {entry["body"]["messages"][-1]["content"]: entry["headers"]
               for entry in aimock.journal()
               if entry["path"] == "/v1/chat/completions" and entry.get("body")}
    assert "authorization" in entries["say hello keyed"]  # aimock shows it as [REDACTED]
    assert "authorization" not in entries["say hello keyless"]
    body = next(e["body"] for e in aimock.journal()
                if e.get("body", {}).get("messages", [{}])[-1].get("content") == "say hello keyed")
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"][0] == {"role": "system", "content": "You are totem."}


def test_401_is_an_auth_error_without_the_key(aimock_auth: Aimock) -> None:
    wrong = "sk-wrong-key-0000"
    with pytest.raises(AuthError) as raised:
        run(aimock_auth, "say hello", key=wrong)
    message = str(raised.value)
    assert raised.value.status == 401 and "Invalid API key" in message
    assert "check the key of provider aimock" in message
    assert wrong not in message and wrong not in repr(raised.value)
    events, _ = run(aimock_auth, "say hello", key="sk-the-right-one")
    assert texts(events).startswith("Hello from aimock")


def test_list_models(aimock: Aimock) -> None:
    async def main() -> list[str]:
        provider = OpenAIChatProvider("aimock", aimock.url)
        try:
            return await provider.list_models()
        finally:
            await provider.aclose()

    assert "gpt-4o" in asyncio.run(main())
