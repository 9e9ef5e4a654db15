"""BedrockProvider against the real aimock simulator (its `/model/{id}/converse-stream`
route streams real binary event-stream frames).

What aimock does and does not do on this route:
- usage is zero unless a fixture sets it; no cache counts, no reasoning signature;
- it answers 500 ("Cannot read properties of undefined (reading 'name')") to a `cachePoint`
  entry in `toolConfig.tools`, which real Bedrock (and botocore's model of the API) accepts:
  requests with tools are sent here with `cache: false`; cache points after the system prompt
  and the last user turn it takes;
- it never sends an exception *event*: an error fixture answers an HTTP status with JSON
  (`{"type": "error", "error": {...}}`), so in-stream exceptions are tested against a local
  server of our own in test_bedrock_http.py;
- the journal records the request converted to OpenAI chat shape, not the Converse body, and
  shows the Authorization header as [REDACTED].
"""

from __future__ import annotations

import pytest

from tests.support import streams
from tests.support.aimock import Aimock, aimock_fixture, fixture
from tests.support.streams import args_of, stream_events, texts
from totem.messages import Message, TextPart, ToolPart, Usage
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
from totem.providers.bedrock import BedrockProvider

pytestmark = pytest.mark.aimock

MODEL = "us.anthropic.claude-sonnet-4-20250514-v1:0"
TOKEN = "bedrock-api-key-SECRET-7"
READ = ToolSpec("read", "Read a file.", {"type": "object", "properties": {
    "path": {"type": "string"}}})


FIXTURES = [
    fixture("say hello", {"content": "Hello from Bedrock, streamed in small chunks.",
                          "usage": {"input_tokens": 11, "output_tokens": 9}}),
    fixture("read it", {"toolCalls": [{"name": "read", "arguments": {"path": "src/app.py"},
                                       "id": "tooluse_abc"}]}),
    fixture("weather", {"toolCalls": [
        {"name": "get_weather", "arguments": {"city": "San Francisco", "unit": "celsius"}},
        {"name": "get_time", "arguments": {"tz": "America/Los_Angeles"}}]}),
    fixture("long story", {"content": "Once upon a time", "finishReason": "length"}),
    fixture("ponder", {"reasoning": "The user wants me to think first.", "content": "Done."}),
    fixture("limited", {"error": {"message": "Too many requests", "type": "ThrottlingException"},
                        "status": 429, "retryAfter": 0}, 0),
    fixture("limited", {"content": "after the limit"}, 1),
    fixture("bad request", {"error": {"message": "Malformed input request",
                                      "type": "ValidationException"}, "status": 400}),
    fixture("cut early", {"content": "This text never arrives."}, 0,
            streamingProfile={"ttft": 0, "tps": 4}, disconnectAfterMs=100),
    fixture("cut early", {"content": "second try"}, 1),
    fixture("here are the results", {"content": "Both files read."}),
    {"match": {}, "response": {"content": "catch-all"}},
]

aimock = aimock_fixture(FIXTURES)
aimock_auth = aimock_fixture(FIXTURES, env={"AIMOCK_API_KEYS": TOKEN}, name="aimock_auth")


def ask(text: str, *history: Message, tools: bool = True) -> ModelRequest:
    """A request with the read tool, and then without cache points (see the module doc)."""
    return streams.ask(text, model=MODEL, before=history, tools=[READ] if tools else [],
                       max_tokens=256, options={} if not tools else {"cache": False})


def run(server: Aimock, request: ModelRequest | str, *, token: str | None = TOKEN,
        tries: int = 10) -> tuple[list[StreamEvent], list[RetryableError]]:
    req = ask(request) if isinstance(request, str) else request
    return stream_events(
        lambda: BedrockProvider("aws", server.root, api_key=token, region="us-west-2"),
        req, tries=tries)


def test_streamed_text_with_usage(aimock: Aimock) -> None:
    events, retries = run(aimock, "say hello")
    assert texts(events) == "Hello from Bedrock, streamed in small chunks."
    assert sum(isinstance(e, TextChunk) for e in events) > 1
    assert [e for e in events if isinstance(e, UsageReport)] == [
        UsageReport(Usage(input=11, output=9))]
    assert events[-1] == StreamEnd("stop", "end_turn") and not retries


def test_cache_points_on_system_and_last_user_turn(aimock: Aimock) -> None:
    aimock.clear_journal()
    events, _ = run(aimock, ask("say hello, cached", tools=False))
    assert texts(events).startswith("Hello from Bedrock")
    [entry] = aimock.journal()
    assert entry["response"]["status"] == 200
    assert entry["body"]["messages"] == [{"role": "system", "content": "You are totem."},
                                         {"role": "user", "content": "say hello, cached"}]


def test_a_tool_call_with_arguments(aimock: Aimock) -> None:
    events, _ = run(aimock, "read it")
    assert [e for e in events if isinstance(e, ToolCallBegin)] == [
        ToolCallBegin(0, "tooluse_abc", "read")]
    assert args_of(events, 0) == {"path": "src/app.py"}
    assert events[-1] == StreamEnd("tool_calls", "tool_use")


def test_two_parallel_tool_calls(aimock: Aimock) -> None:
    events, _ = run(aimock, "what is the weather")
    begins = [e for e in events if isinstance(e, ToolCallBegin)]
    assert [(b.index, b.name) for b in begins] == [(0, "get_weather"), (1, "get_time")]
    assert all(b.call_id.startswith("toolu_") for b in begins)
    assert args_of(events, 0) == {"city": "San Francisco", "unit": "celsius"}
    assert args_of(events, 1) == {"tz": "America/Los_Angeles"}
    assert events[-1] == StreamEnd("tool_calls", "tool_use")


def test_max_tokens_is_length(aimock: Aimock) -> None:
    events, _ = run(aimock, "long story")
    assert texts(events) == "Once upon a time"
    assert events[-1] == StreamEnd("length", "max_tokens")


def test_reasoning_content_becomes_reasoning_chunks(aimock: Aimock) -> None:
    events, _ = run(aimock, "ponder this")
    assert "".join(e.text for e in events if isinstance(e, ReasoningChunk)) == (
        "The user wants me to think first.")
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextChunk))
    assert all(isinstance(e, ReasoningChunk) for e in events[:first_text])
    assert texts(events) == "Done."


def test_429_then_success_is_retried(aimock: Aimock) -> None:
    events, retries = run(aimock, "limited")
    assert texts(events) == "after the limit"
    assert len(retries) == 1 and isinstance(retries[0], RateLimited)
    assert retries[0].status == 429 and "Too many requests" in retries[0].message


def test_400_is_an_invalid_request_at_once(aimock: Aimock) -> None:
    with pytest.raises(InvalidRequest, match="HTTP 400: Malformed input request"):
        run(aimock, "bad request")


def test_a_stream_cut_before_output_is_retried(aimock: Aimock) -> None:
    events, retries = run(aimock, "cut early")
    assert texts(events) == "second try"
    assert len(retries) == 1 and retries[0].message.startswith("network:")


def test_tool_results_reach_aimock_as_tool_messages(aimock: Aimock) -> None:
    calls = [ToolPart(call_id=f"tu{i}", name="read", input={"path": p}, state="completed",
                      output=f"content of {p}") for i, p in enumerate(("a.py", "b.py"))]
    turn = Message(id="a1", session_id="s", role="assistant", parts=[TextPart("Reading."),
                                                                       *calls], model="aws/x")
    first = Message(id="u0", session_id="s", role="user", parts=[TextPart("read a and b")])
    aimock.clear_journal()
    events, _ = run(aimock, ask("here are the results", first, turn))
    assert texts(events) == "Both files read."
    [entry] = aimock.journal()
    body = entry["body"]
    assert entry["path"] == f"/model/{MODEL.replace(':', '%3A')}/converse-stream"
    assert body["messages"][0] == {"role": "system", "content": "You are totem."}
    tools = [m for m in body["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tools] == [
        ("tu0", "content of a.py"), ("tu1", "content of b.py")]
    assert body["messages"][-1] == {"role": "user", "content": "here are the results"}


def test_bearer_token_from_the_key_or_the_environment(
    aimock: Aimock, monkeypatch: pytest.MonkeyPatch
) -> None:
    aimock.clear_journal()
    run(aimock, "say hello")
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "from-the-env")
    run(aimock, "say hello", token=None)
    headers = [entry["headers"] for entry in aimock.journal()]
    assert len(headers) == 2
    assert all(h.get("authorization") == "[REDACTED]" for h in headers)
    assert all("x-amz-date" not in h for h in headers)  # a bearer token, not SigV4
    assert headers[0]["content-type"] == "application/json"


def test_a_checked_bearer_token(aimock_auth: Aimock, monkeypatch: pytest.MonkeyPatch) -> None:
    events, _ = run(aimock_auth, "say hello")
    assert texts(events).startswith("Hello from Bedrock")
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    wrong = "wrong-token-1234"
    with pytest.raises(AuthError) as raised:
        run(aimock_auth, "say hello", token=wrong)
    assert raised.value.status == 401 and "Invalid API key" in raised.value.message
    assert wrong not in str(raised.value) and "bearer token of provider aws" in str(raised.value)
