"""AnthropicProvider against the real aimock simulator's Anthropic endpoint (POST /v1/messages).

What aimock does on this endpoint, and what the tests make of it:
- its journal keeps the request *converted to OpenAI chat shape*: tool_result blocks become
  `role: tool` messages with their text only, and `cache_control`, images, thinking and
  `x-api-key` values are not in it. The raw body is therefore also read at httpx's
  transport seam (`Tap`, which forwards every request to aimock unchanged);
- usage counts are 0 unless a fixture sets them; the thinking signature is a placeholder
  unless a fixture sets `reasoningSignature`;
- with `X-AIMock-Strict: true` it checks Anthropic's thinking rule: a tool turn sent back
  while thinking is on must start with its signed thinking block (else 400);
- errors are Anthropic-shaped (`{"type": "error", "error": {...}}`), 429 with Retry-After;
  a wrong key answers 401 in OpenAI's shape, which our reader also understands.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.support import streams
from tests.support.aimock import Aimock, aimock_fixture, fixture
from tests.support.local_http import Tap
from tests.support.streams import args_of, stream_events, texts, user
from totem.messages import ImageBlock, Message, Part, ReasoningPart, TextPart, ToolPart
from totem.providers.anthropic import AnthropicProvider
from totem.providers.base import (
    AuthError,
    InvalidRequest,
    ModelRequest,
    RateLimited,
    ReasoningChunk,
    RetryableError,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolCallBegin,
    ToolSpec,
    UsageReport,
)

pytestmark = pytest.mark.aimock

MODEL = "claude-sonnet-4-5"  # a model aimock counts as reasoning-capable
KEY = "sk-ant-aimock-SECRET-7"
SIGNATURE = "EqQBCkYIBxgCKkBsaWduYXR1cmU="
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJ"
       "RU5ErkJggg==")
READ = ToolSpec("read", "Read a file.", {"type": "object",
                                         "properties": {"path": {"type": "string"}}})


FIXTURES = [
    {"match": {"toolCallId": "toolu_shot"}, "response": {"content": "A red pixel."}},
    {"match": {"toolCallId": "toolu_think"}, "response": {"content": "The file is short."}},
    {"match": {"userMessage": "think then read", "hasToolResult": True},
     "response": {"content": "Both files read."}},
    fixture("say hello", {"content": "Hello from aimock, streamed in small chunks.",
                          "usage": {"input_tokens": 11, "output_tokens": 9}}),
    fixture("read the file", {"toolCalls": [{"name": "read", "arguments": {"path": "a.py"}}]}),
    fixture("weather", {"toolCalls": [
        {"name": "get_weather", "arguments": {"city": "San Francisco", "unit": "celsius"}},
        {"name": "get_time", "arguments": {"tz": "America/Los_Angeles"}}]}),
    fixture("ponder", {"reasoning": "The user wants me to think first.", "content": "Done.",
                       "reasoningSignature": SIGNATURE, "redactedThinking": ["EmwKAhgB"]}),
    fixture("think then read", {"reasoning": "I need the file.", "reasoningSignature": SIGNATURE,
                                "redactedThinking": ["EmwKAhgB"],
                                "toolCalls": [{"name": "read", "arguments": {"path": "a.py"}},
                                              {"name": "read", "arguments": {"path": "b.py"}}]}),
    fixture("long story", {"content": "Once upon a time", "finishReason": "length"}),
    fixture("limited", {"error": {"message": "Number of request tokens has exceeded your "
                                  "per-minute rate limit", "type": "rate_limit_error"},
                        "status": 429, "retryAfter": 3}, 0),
    fixture("limited", {"content": "after the limit"}, 1),
    fixture("overloaded", {"error": {"message": "Overloaded", "type": "overloaded_error"},
                           "status": 529}, 0),
    fixture("overloaded", {"content": "back again"}, 1),
    fixture("bad request", {"error": {"message": "max_tokens: Field required",
                                      "type": "invalid_request_error"}, "status": 400}),
    fixture("garbled", {"content": "never parsed"}, 0, chaos={"malformedRate": 1}),
    fixture("garbled", {"content": "clean again"}, 1),
    # one event at once, then one every 250 ms: message_start, the block's start, text...
    fixture("cut early", {"content": "This text never arrives."}, 0,
            streamingProfile={"ttft": 0, "tps": 4}, disconnectAfterMs=400),
    fixture("cut early", {"content": "second try"}, 1),
    fixture("cut late", {"content": "The first words arrive, the rest does not."},
            streamingProfile={"ttft": 0, "tps": 4}, disconnectAfterMs=900),
    {"match": {}, "response": {"content": "catch-all"}},
]

aimock = aimock_fixture(FIXTURES)
aimock_auth = aimock_fixture(FIXTURES, env={"AIMOCK_API_KEYS": "sk-ant-the-right-one"},
                             name="aimock_auth")


def ask(text: str, **kw: Any) -> ModelRequest:
    return streams.ask(text, model=MODEL, **kw)


def run(
    server: Aimock,
    request: ModelRequest | str,
    *,
    tries: int = 10,
    key: str | None = KEY,
    headers: dict[str, str] | None = None,
    seen: list[StreamEvent] | None = None,
    transport: Tap | None = None,
) -> tuple[list[StreamEvent], list[RetryableError]]:
    """Stream through the retry policy; events also land in `seen` as they come."""
    req = ask(request) if isinstance(request, str) else request
    return stream_events(
        lambda: AnthropicProvider("aimock", server.root, api_key=key, headers=headers,
                                  transport=transport),
        req, tries=tries, seen=seen)


def journal_bodies(server: Aimock) -> list[dict[str, Any]]:
    return [e["body"] for e in server.journal()
            if e["path"] == "/v1/messages" and e.get("body")]


def test_streamed_text_with_usage_and_headers(aimock: Aimock) -> None:
    events, retries = run(aimock, "say hello")
    assert texts(events) == "Hello from aimock, streamed in small chunks."
    assert sum(isinstance(e, TextChunk) for e in events) > 1
    usage = [e.usage for e in events if isinstance(e, UsageReport)]
    assert [(u.input, u.output) for u in usage] == [(11, 9)]
    assert events[-1] == StreamEnd("stop", "end_turn") and not retries
    entry = next(e for e in aimock.journal()
                 if e["path"] == "/v1/messages" and e["body"]["messages"][-1]["content"]
                 == "say hello")
    assert entry["headers"]["anthropic-version"] == "2023-06-01"
    assert "x-api-key" in entry["headers"] and KEY not in json.dumps(entry)
    assert entry["body"]["messages"][0] == {"role": "system", "content": "You are totem."}
    assert entry["body"]["max_tokens"] == 8192


def test_a_tool_call_with_arguments(aimock: Aimock) -> None:
    events, _ = run(aimock, ask("read the file", tools=[READ]))
    begins = [e for e in events if isinstance(e, ToolCallBegin)]
    assert [(b.index, b.name) for b in begins] == [(0, "read")]
    assert begins[0].call_id.startswith("toolu_")
    assert args_of(events, 0) == {"path": "a.py"}
    assert events[-1] == StreamEnd("tool_calls", "tool_use")
    tools = next(b["tools"] for b in journal_bodies(aimock) if b.get("tools"))
    assert tools[0]["function"]["parameters"] == READ.parameters  # sent as input_schema


def test_two_parallel_tool_calls(aimock: Aimock) -> None:
    events, _ = run(aimock, "what is the weather")
    begins = [e for e in events if isinstance(e, ToolCallBegin)]
    assert [(b.index, b.name) for b in begins] == [(0, "get_weather"), (1, "get_time")]
    assert begins[0].call_id != begins[1].call_id
    assert args_of(events, 0) == {"city": "San Francisco", "unit": "celsius"}
    assert args_of(events, 1) == {"tz": "America/Los_Angeles"}
    assert events[-1] == StreamEnd("tool_calls", "tool_use")


def test_thinking_redacted_thinking_and_signature(aimock: Aimock) -> None:
    events, _ = run(aimock, ask("ponder this", options={"thinking": {"budget_tokens": 2048}}))
    reasoning = [e for e in events if isinstance(e, ReasoningChunk)]
    assert reasoning[0] == ReasoningChunk("", redacted_data="EmwKAhgB")
    assert "".join(e.text for e in reasoning) == "The user wants me to think first."
    assert [e.signature for e in reasoning if e.signature] == [SIGNATURE]
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextChunk))
    assert all(isinstance(e, ReasoningChunk) for e in events[:first_text])
    assert texts(events) == "Done."


def _tool_turn(*parts: Part, model: str) -> list[Message]:
    return [user("check a.py"),
            Message(id="a", session_id="s", role="assistant", model=model, parts=list(parts))]


def test_signed_thinking_goes_back_and_passes_the_strict_check(aimock: Aimock) -> None:
    call = ToolPart(call_id="toolu_think", name="read", input={"path": "a.py"},
                    state="completed", output="print(1)")
    strict = {"x-aimock-strict": "true"}
    thinking = {"thinking": {"budget_tokens": 2048}}
    ours = ModelRequest(MODEL, "s", _tool_turn(ReasoningPart("Read it.", signature=SIGNATURE),
                                               call, model=f"aimock/{MODEL}"),
                        tools=[READ], options=thinking)
    recorder = Tap()
    events, _ = run(aimock, ours, headers=strict, transport=recorder)
    assert texts(events) == "The file is short."
    sent = recorder.bodies()[-1]
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert sent["messages"][1]["content"][0] == {"type": "thinking", "thinking": "Read it.",
                                                 "signature": SIGNATURE}
    # From another provider the thinking cannot go back: thinking is left off for this
    # request instead of failing it.
    foreign = ModelRequest(MODEL, "s", _tool_turn(ReasoningPart("Read it.", signature="x"), call,
                                                  model="gemini/gemini-2.5-pro"),
                           tools=[READ], options=thinking)
    events, _ = run(aimock, foreign, headers=strict, transport=recorder)
    assert texts(events) == "The file is short."
    assert "thinking" not in recorder.bodies()[-1]
    # What aimock (like the API) refuses: thinking on, a tool turn without it.
    forced = {"thinking": {"type": "enabled", "budget_tokens": 2048}}
    broken = ModelRequest(MODEL, "s", _tool_turn(call, model=f"aimock/{MODEL}"), tools=[READ],
                          options={"extra_body": forced})
    with pytest.raises(InvalidRequest, match="must begin with a `thinking` block"):
        run(aimock, broken, headers=strict)


def test_a_recorded_thinking_tool_turn_goes_back_whole(aimock: Aimock) -> None:
    from totem.run.recorder import StepRecorder
    from totem.store.sqlite import SqliteStore

    thinking = {"thinking": {"budget_tokens": 2048}}
    strict = {"x-aimock-strict": "true"}
    events, _ = run(aimock, ask("think then read", tools=[READ], options=thinking),
                    headers=strict)
    store = SqliteStore(":memory:")
    session = store.create_session(project="/p", model=f"aimock/{MODEL}")
    message = Message(id="a1", session_id=session.id, role="assistant", model=f"aimock/{MODEL}")
    store.add_message(message)
    recorder = StepRecorder(message, store=store, emit=lambda event: None)

    async def record() -> list[ToolPart]:  # the recorder runs inside the loop's event loop
        for event in events:
            recorder.on_event(event)
        return recorder.end()

    for part, output in zip(asyncio.run(record()), ("print(1)", "print(2)"), strict=True):
        part.state, part.output = "completed", output
    store.close()
    recorder_tap = Tap()
    follow, _ = run(aimock, ModelRequest(MODEL, "s", [user("think then read"), message],
                                         tools=[READ], options=thinking),
                    headers=strict, transport=recorder_tap)
    assert texts(follow) == "Both files read."  # aimock's strict thinking check passed
    sent = recorder_tap.bodies()[-1]["messages"]
    assert [b["type"] for b in sent[1]["content"]] == [
        "redacted_thinking", "thinking", "tool_use", "tool_use"]
    assert sent[1]["content"][1] == {"type": "thinking", "thinking": "I need the file.",
                                     "signature": SIGNATURE}
    ids = [b["id"] for b in sent[1]["content"][2:]]
    assert [(b["type"], b["tool_use_id"], b["content"]) for b in sent[2]["content"]] == [
        ("tool_result", ids[0], "print(1)"), ("tool_result", ids[1], "print(2)")]


def test_a_tool_result_with_an_image(aimock: Aimock) -> None:
    shot = ToolPart(call_id="toolu_shot", name="screenshot", input={}, state="completed",
                    output="Captured 1x1 px.", images=[ImageBlock("image/png", PNG)])
    request = ModelRequest(MODEL, "s", [*_tool_turn(shot, model=f"aimock/{MODEL}"),
                                        user("what do you see?")])
    recorder = Tap()
    events, _ = run(aimock, request, transport=recorder)
    assert texts(events) == "A red pixel."
    result = recorder.bodies()[-1]["messages"][2]["content"]
    assert result[0] == {"type": "tool_result", "tool_use_id": "toolu_shot", "content": [
        {"type": "text", "text": "Captured 1x1 px."},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ]}
    assert result[1]["type"] == "text" and result[1]["text"] == "what do you see?"
    journal = next(b for b in journal_bodies(aimock)
                   if any(m.get("tool_call_id") == "toolu_shot" for m in b["messages"]))
    assert {"role": "tool", "content": "Captured 1x1 px.", "tool_call_id": "toolu_shot"} in \
        journal["messages"]
    calls = [c for m in journal["messages"] for c in m.get("tool_calls") or []]
    assert [(c["id"], c["function"]["name"]) for c in calls] == [("toolu_shot", "screenshot")]


def test_cache_markers_in_the_request(aimock: Aimock) -> None:
    history = [user("one"), Message(id="a", session_id="s", role="assistant",
                                    model=f"aimock/{MODEL}", parts=[TextPart("ok")]),
               user("say hello again")]
    recorder = Tap()
    events, _ = run(aimock, ModelRequest(MODEL, "You are totem.", history, tools=[READ],
                                         options={"cache_ttl": "1h"}), transport=recorder)
    assert texts(events).startswith("Hello from aimock")
    body = recorder.bodies()[-1]
    marker = {"type": "ephemeral", "ttl": "1h"}
    assert body["system"][-1]["cache_control"] == marker
    assert body["tools"][-1]["cache_control"] == marker
    assert [m["content"][-1].get("cache_control") for m in body["messages"]] == [
        marker, None, marker]
    assert json.dumps(body).count('"cache_control"') == 4
    assert any(b["messages"][-1]["content"] == "say hello again" for b in journal_bodies(aimock))


def test_max_tokens_stop_is_length(aimock: Aimock) -> None:
    events, _ = run(aimock, ask("tell a long story", max_tokens=5))
    assert texts(events) == "Once upon a time"
    assert events[-1] == StreamEnd("length", "max_tokens")


def test_429_with_retry_after_then_success(aimock: Aimock) -> None:
    events, retries = run(aimock, "limited")
    assert texts(events) == "after the limit"
    assert len(retries) == 1 and isinstance(retries[0], RateLimited)
    assert retries[0].status == 429 and retries[0].retry_after == 3.0
    assert "per-minute rate limit" in retries[0].message


def test_529_overloaded_is_retried(aimock: Aimock) -> None:
    events, retries = run(aimock, "overloaded")
    assert texts(events) == "back again"
    assert len(retries) == 1 and retries[0].status == 529 and "Overloaded" in retries[0].message


def test_400_is_fatal_with_anthropics_message(aimock: Aimock) -> None:
    with pytest.raises(InvalidRequest, match="HTTP 400: max_tokens: Field required"):
        run(aimock, "bad request")


def test_malformed_answer_is_retried(aimock: Aimock) -> None:
    events, retries = run(aimock, "garbled")
    assert texts(events) == "clean again"
    assert len(retries) == 1 and "malformed response" in retries[0].message


def test_a_stream_cut_before_any_text_is_retried(aimock: Aimock) -> None:
    events, retries = run(aimock, "cut early")
    assert texts(events) == "second try"
    assert len(retries) == 1 and retries[0].message.startswith("network:")


def test_a_stream_cut_after_output_raises_and_keeps_what_was_shown(aimock: Aimock) -> None:
    seen: list[StreamEvent] = []
    with pytest.raises(RetryableError, match="network"):
        run(aimock, "cut late", seen=seen)
    shown = texts(seen)
    assert shown and "The first words arrive, the rest does not.".startswith(shown)
    assert shown != "The first words arrive, the rest does not."
    assert not any(isinstance(e, StreamEnd) for e in seen)


def test_401_is_an_auth_error_without_the_key(aimock_auth: Aimock) -> None:
    wrong = "sk-ant-wrong-0000"
    with pytest.raises(AuthError) as raised:
        run(aimock_auth, "say hello", key=wrong)
    text = f"{raised.value} {raised.value!r}"
    assert raised.value.status == 401 and "Invalid API key" in text
    assert "check the key of provider aimock" in text and wrong not in text
    events, _ = run(aimock_auth, "say hello", key="sk-ant-the-right-one")
    assert texts(events).startswith("Hello from aimock")


def test_list_models(aimock: Aimock) -> None:
    async def main() -> list[str]:
        provider = AnthropicProvider("aimock", aimock.url, api_key=KEY)
        try:
            return await provider.list_models()
        finally:
            await provider.aclose()

    assert "claude-3-5-sonnet-20241022" in asyncio.run(main())
