"""GeminiProvider against the real aimock simulator, and a local server where aimock falls short.

What aimock (1.43) does and does not do for Gemini, and how the tests cope:
- it serves `POST /v1beta/models/{model}:streamGenerateContent` as SSE, text in small
  chunks, reasoning as `thought: true` parts, tool calls as `functionCall` parts (all calls
  of an answer in one chunk) with finish reason FUNCTION_CALL, a fixture's
  `finishReason: "length"` as MAX_TOKENS;
- it never sends a `thoughtSignature`, and its journal holds its own OpenAI-shaped
  conversion of the body, not the body: signatures, `systemInstruction` and the like are
  read from what the provider sent (a recording httpx transport, `Tap`), and the signature
  round trip runs against a local server that streams the real shape with signatures;
- it has no model list (`GET /v1beta/models` is a 404): paging is tested on the local server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from tests.support.aimock import Aimock, aimock_fixture
from tests.support.gemini_streams import (
    ANSWER,
    FIXTURES,
    KEY,
    MODEL,
    SIG_CALL,
    SIG_TEXT,
    SIG_THOUGHT,
    SIGNED_STREAM,
    WEATHER,
    ask,
    model_pages,
    run,
)
from tests.support.local_http import Recorded, Reply, Tap, scripted_server, sse
from tests.support.streams import texts
from totem.messages import Message
from totem.providers.base import (
    AuthError,
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
from totem.providers.gemini import GeminiModel, GeminiProvider

pytestmark = pytest.mark.aimock

aimock = aimock_fixture(FIXTURES)
aimock_auth = aimock_fixture(FIXTURES, env={"AIMOCK_API_KEYS": KEY}, name="aimock_auth")


def recorded(events: Sequence[StreamEvent], outputs: Sequence[str]) -> list[Message]:
    """The step as the loop stores it (StepRecorder, SQLite), tool results filled in: the
    messages a resumed session would send."""
    from totem.run.recorder import StepRecorder
    from totem.store.sqlite import SqliteStore

    store = SqliteStore(":memory:")
    session = store.create_session(project="/p", model=f"gem/{MODEL}")
    message = Message(id="a1", session_id=session.id, role="assistant", model=f"gem/{MODEL}")
    store.add_message(message)

    async def record() -> None:  # the recorder flushes on the running loop
        recorder = StepRecorder(message, store=store, emit=lambda event: None)
        for event in events:
            recorder.on_event(event)
        for part, output in zip(recorder.end(), outputs, strict=True):
            part.state, part.output = "completed", output
            recorder.save(part)

    asyncio.run(record())
    try:
        return store.messages(session.id)
    finally:
        store.close()


def test_streamed_text_with_usage_and_the_request_shape(aimock: Aimock) -> None:
    tap = Tap()
    events, _ = run(aimock.root, ask("say hello", tools=[WEATHER], max_tokens=500), tap=tap)
    assert texts(events) == "Hello from aimock, streamed in small chunks."
    assert sum(isinstance(e, TextChunk) for e in events) > 3
    usage = [e.usage for e in events if isinstance(e, UsageReport)]
    assert [(u.input, u.output) for u in usage] == [(12, 7)]
    assert events[-1] == StreamEnd("stop", "STOP")
    [sent] = tap.requests
    assert sent.url.path == f"/v1beta/models/{MODEL}:streamGenerateContent"
    assert sent.url.query == b"alt=sse" and KEY not in str(sent.url)
    assert sent.headers["x-goog-api-key"] == KEY and "authorization" not in sent.headers
    body = json.loads(sent.content)
    assert body["systemInstruction"] == {"parts": [{"text": "You are totem."}]}
    assert body["generationConfig"] == {"maxOutputTokens": 500}
    # aimock understood it: its journal has its own conversion of our body.
    entry = aimock.journal()[-1]
    assert entry["response"]["status"] == 200
    assert entry["body"]["messages"][0] == {"role": "system", "content": "You are totem."}
    assert entry["body"]["tools"][0]["function"]["name"] == "get_weather"
    assert entry["body"]["max_tokens"] == 500


def test_a_function_call_with_its_args(aimock: Aimock) -> None:
    events, _ = run(aimock.root, ask("one call", tools=[WEATHER]))
    [begin] = [e for e in events if isinstance(e, ToolCallBegin)]
    assert (begin.index, begin.name) == (0, "get_weather") and begin.call_id
    args = "".join(e.text for e in events if isinstance(e, ToolArgsChunk))
    assert json.loads(args) == {"city": "Paris", "days": 3}
    assert events[-1] == StreamEnd("tool_calls", "FUNCTION_CALL")


def test_two_parallel_calls_then_their_results_in_one_content(aimock: Aimock) -> None:
    events, _ = run(aimock.root, ask("weather", tools=[WEATHER]))
    begins = [e for e in events if isinstance(e, ToolCallBegin)]
    assert [(b.index, b.name) for b in begins] == [(0, "get_weather"), (1, "get_time")]
    assert len({b.call_id for b in begins}) == 2
    history = recorded(events, ("21 C, sunny", "21:00"))
    tap = Tap()
    follow, _ = run(aimock.root, ask("weather", history=history, tools=[WEATHER]), tap=tap)
    assert texts(follow) == "Sunny in Paris, 21:00 in Tokyo."
    contents = tap.bodies()[0]["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "get_weather", "response": {"output": "21 C, sunny"}}},
        {"functionResponse": {"name": "get_time", "response": {"output": "21:00"}}}]
    converted = aimock.journal()[-1]["body"]["messages"]
    assert [m["role"] for m in converted] == ["system", "user", "assistant", "tool", "tool"]
    assert json.loads(converted[3]["content"]) == {"output": "21 C, sunny"}


def test_thoughts_become_reasoning(aimock: Aimock) -> None:
    events, _ = run(aimock.root, ask("ponder"))
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningChunk))
    assert reasoning == "The user wants me to think first." and texts(events) == "Done."
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextChunk))
    assert all(isinstance(e, ReasoningChunk) for e in events[:first_text])


def test_max_tokens_is_length(aimock: Aimock) -> None:
    events, _ = run(aimock.root, ask("too long"))
    assert texts(events) == "This answer was cut"
    assert events[-1] == StreamEnd("length", "MAX_TOKENS")


def test_429_is_rate_limited_and_retried(aimock: Aimock) -> None:
    events, retries = run(aimock.root, ask("limited"), tries=3)
    assert texts(events) == "after the limit"
    [error] = retries
    assert isinstance(error, RateLimited) and error.status == 429 and error.retry_after == 0
    assert "HTTP 429 RESOURCE_EXHAUSTED: Quota exceeded" in error.message


def test_a_malformed_answer_is_retryable(aimock: Aimock) -> None:
    with pytest.raises(RetryableError, match="malformed response"):
        run(aimock.root, ask("garbled"))


def test_401_is_an_auth_error_without_the_key(aimock_auth: Aimock) -> None:
    wrong = "AIza-wrong-0000"
    with pytest.raises(AuthError) as raised:
        run(aimock_auth.root, ask("say hello"), key=wrong)
    assert raised.value.status == 401 and "Invalid API key" in raised.value.message
    assert "check the key of provider gem" in raised.value.message
    assert wrong not in str(raised.value)
    events, _ = run(aimock_auth.root, ask("say hello"))
    assert texts(events).startswith("Hello from aimock")


# -- a local server with the real wire shape: signatures, key errors, model list -----------

def signed(seen: Recorded) -> Reply:
    contents = seen.json()["contents"]
    return sse(ANSWER if contents[-1]["role"] == "user" and len(contents) > 1 else SIGNED_STREAM)


def test_thought_signatures_come_back_on_the_parts_they_came_with(aimock: Aimock) -> None:
    route = ("POST", f"/v1beta/models/{MODEL}:streamGenerateContent")
    with scripted_server({route: signed}) as server:
        events, _ = run(server.url, ask("weather in two cities", tools=[WEATHER]))
        begins = [e for e in events if isinstance(e, ToolCallBegin)]
        assert [b.signature for b in begins] == [SIG_CALL, None]
        usage = next(e.usage for e in events if isinstance(e, UsageReport))
        assert (usage.input, usage.output, usage.cache_read, usage.reasoning) == (50, 60, 32, 40)
        stored = recorded(events, ("sunny", "sunny"))
        follow, _ = run(server.url, ask("weather in two cities", history=stored,
                                        tools=[WEATHER]))
        assert texts(follow) == "Both sunny."
        sent = server.requests[-1].json()["contents"]
    assert sent[1] == {"role": "model", "parts": [
        {"text": "I should read the file.", "thought": True, "thoughtSignature": SIG_THOUGHT},
        {"text": "Reading it.", "thoughtSignature": SIG_TEXT},
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
         "thoughtSignature": SIG_CALL},
        {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}]}
    assert [p["functionResponse"]["response"] for p in sent[2]["parts"]] == [
        {"output": "sunny"}, {"output": "sunny"}]
    # The same signed body is accepted by aimock (which reads past the signatures).
    tap = Tap()
    follow, _ = run(aimock.root, ask("weather", history=stored, tools=[WEATHER]), tap=tap)
    assert texts(follow) == "Sunny in Paris, 21:00 in Tokyo."
    assert tap.bodies()[0]["contents"][1] == sent[1]


def invalid_key(_: Recorded) -> Reply:
    body = {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                      "status": "INVALID_ARGUMENT", "details": [
                          {"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                           "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}}
    return Reply(400, json.dumps(body).encode())


def quota(_: Recorded) -> Reply:
    body = {"error": {"code": 429, "message": "You exceeded your current quota.",
                      "status": "RESOURCE_EXHAUSTED", "details": [
                          {"@type": "type.googleapis.com/google.rpc.RetryInfo",
                           "retryDelay": "37s"}]}}
    return Reply(429, json.dumps(body).encode())


def test_gemini_error_shapes() -> None:
    routes = {("POST", "/v1beta/models/bad-key:streamGenerateContent"): invalid_key,
              ("POST", "/v1beta/models/quota:streamGenerateContent"): quota}
    with scripted_server(routes) as server:
        with pytest.raises(AuthError, match="API key not valid") as bad:
            run(server.url, ask("x", model="bad-key"))
        with pytest.raises(RateLimited) as limited:
            run(server.url, ask("x", model="quota"))
    assert bad.value.status == 400 and "INVALID_ARGUMENT" in bad.value.message
    assert limited.value.retry_after == 37.0


def test_model_list_pages_through_next_page_token() -> None:
    async def listing(url: str, **kw: Any) -> list[GeminiModel]:
        provider = GeminiProvider("gem", url, api_key=KEY)
        try:
            return await provider.list_models(**kw)
        finally:
            await provider.aclose()

    with scripted_server({("GET", "/v1beta/models"): model_pages}) as server:
        models = asyncio.run(listing(server.url + "/v1beta/"))
        everything = asyncio.run(listing(server.url, chat_only=False))
        seen = server.requests
    assert [m.id for m in models] == ["gemini-2.5-flash", "gemini-2.0-flash", "gemma-3-27b-it"]
    assert len(everything) == 4
    flash = models[0]
    assert (flash.input_token_limit, flash.output_token_limit, flash.thinking) == (
        1048576, 65536, True)
    assert models[1].thinking is None and flash.display_name == "Gemini 2.5 Flash"
    assert [r.query.get("pageToken") for r in seen[:3]] == [None, ["page-2"], ["page-3"]]
    assert all(r.query["pageSize"] == ["1000"] and r.headers["x-goog-api-key"] == KEY
               for r in seen)
