"""OllamaProvider against the real aimock simulator, and a local server for what aimock lacks.

What aimock (1.43) does for Ollama, and how the tests cope:
- `POST /api/chat` answers NDJSON (`application/x-ndjson`), text in small chunks, tool calls
  whole and without ids, reasoning as `message.reasoning_content` (real Ollama says
  `message.thinking`), `done_reason` always "stop" (a fixture's finishReason is ignored) and
  usage counts of 0;
- its journal holds its own OpenAI-shaped conversion of the body, without `options`,
  `think` or `keep_alive`: `num_ctx` is read from what the provider sent (`Tap`);
- `GET /api/tags` lists the fixtures' models (or a default list); `/api/show` is a 404, so
  the window is capped by `max_num_ctx` there, and by `/api/show`'s context length on the
  local server, which also serves `done_reason: "length"` and a stream cut before `done`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from tests.support import streams
from tests.support.aimock import Aimock, aimock_fixture, fixture
from tests.support.local_http import Recorded, Reply, Tap, scripted_server
from tests.support.streams import stream_events, texts
from totem.abort import AbortSignal
from totem.messages import Message, TextPart, ToolPart
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
    ToolArgsChunk,
    ToolCallBegin,
    ToolSpec,
)
from totem.providers.ollama import OllamaModel, OllamaProvider
from totem.providers.transport.retry import stream_with_retry

pytestmark = pytest.mark.aimock

MODEL = "qwen3:4b"
KEY = "ollama-SECRET-key-7"
READ = ToolSpec("read", "Read a file.", {"type": "object", "properties": {
    "path": {"type": "string"}}, "required": ["path"]})


FIXTURES = [
    fixture("say hello", {"content": "Hello from aimock, streamed in small chunks."},
            chunkSize=8),
    fixture("read it", {"content": "The file prints 1."}, match={"hasToolResult": True}),
    fixture("read it", {"toolCalls": [{"name": "read", "arguments": '{"path": "a.py"}'},
                                      {"name": "read", "arguments": '{"path": "b.py"}'}]}),
    fixture("ponder", {"reasoning": "Let me think about it.", "content": "Done."}),
    fixture("limited", {"error": {"message": "too many requests", "type": "rate_limit"},
                        "status": 429, "retryAfter": 2}),
    {"match": {}, "response": {"content": "catch-all"}},
]

aimock = aimock_fixture(FIXTURES)
aimock_auth = aimock_fixture(FIXTURES, env={"AIMOCK_API_KEYS": KEY}, name="aimock_auth")


def ask(text: str, *, history: Sequence[Message] = (), **kw: Any) -> ModelRequest:
    """`text` from the user, then the `history` that followed it."""
    return streams.ask(text, model=kw.pop("model", MODEL), after=history, **kw)


def provider(url: str, tap: Tap | None = None, **options: Any) -> OllamaProvider:
    return OllamaProvider("local", url, api_key=options.pop("key", None), transport=tap,
                          options=options)


async def collect(ollama: OllamaProvider, request: ModelRequest) -> list[StreamEvent]:
    stream = stream_with_retry(lambda: ollama.stream(request), abort=AbortSignal(),
                               max_tries=1)
    return [event async for event in stream]


def run(url: str, request: ModelRequest, *, tap: Tap | None = None,
        **options: Any) -> list[StreamEvent]:
    return stream_events(lambda: provider(url, tap, **options), request)[0]


def test_streamed_text_and_the_body_sent(aimock: Aimock) -> None:
    tap = Tap()
    events = run(aimock.root, ask("say hello", temperature=0.2), tap=tap, keep_alive="10m",
                 repeat_penalty=1.1)
    assert texts(events) == "Hello from aimock, streamed in small chunks."
    assert sum(isinstance(e, TextChunk) for e in events) > 3
    assert events[-1] == StreamEnd("stop", "stop")
    [body] = tap.bodies("/api/chat")
    assert body["stream"] is True and body["keep_alive"] == "10m"
    assert body["options"]["temperature"] == 0.2 and body["options"]["repeat_penalty"] == 1.1
    assert body["options"]["num_ctx"] == 6144  # (a small prompt + 4096) x 1.25, rounded up
    assert [r.url.path for r in tap.requests] == ["/api/show", "/api/chat"]
    entry = aimock.journal()[-1]
    assert entry["path"] == "/api/chat" and entry["response"]["status"] == 200
    assert entry["body"]["messages"][0] == {"role": "system", "content": "You are totem."}


def test_tool_calls_then_their_results(aimock: Aimock) -> None:
    events = run(aimock.root, ask("read it", tools=[READ]))
    begins = [e for e in events if isinstance(e, ToolCallBegin)]
    assert [(b.index, b.name) for b in begins] == [(0, "read"), (1, "read")]
    assert len({b.call_id for b in begins}) == 2
    args = [json.loads(e.text) for e in events if isinstance(e, ToolArgsChunk)]
    assert args == [{"path": "a.py"}, {"path": "b.py"}]
    assert events[-1] == StreamEnd("tool_calls", "stop")
    step = Message(id="a1", session_id="s", role="assistant", model=f"local/{MODEL}", parts=[
        ToolPart(b.call_id, b.name, a, json.dumps(a), "completed", f"content of {a['path']}")
        for b, a in zip(begins, args, strict=True)])
    follow = run(aimock.root, ask("read it", history=[step], tools=[READ]))
    assert texts(follow) == "The file prints 1."
    converted = aimock.journal()[-1]["body"]
    assert [m["role"] for m in converted["messages"]] == [
        "system", "user", "assistant", "tool", "tool"]
    assert converted["messages"][3]["content"] == "content of a.py"
    assert converted["tools"][0]["function"]["name"] == "read"


def test_think_is_sent_and_reasoning_comes_back(aimock: Aimock) -> None:
    tap = Tap()
    events = run(aimock.root, ask("ponder"), tap=tap, think=True)
    assert "".join(e.text for e in events if isinstance(e, ReasoningChunk)) == (
        "Let me think about it.")
    assert texts(events) == "Done."
    assert tap.bodies("/api/chat")[0]["think"] is True


def test_num_ctx_follows_the_conversation_up_to_the_configured_cap(aimock: Aimock) -> None:
    tap = Tap()
    long_history = [Message(id="a", session_id="s", role="assistant", model=f"local/{MODEL}",
                            parts=[TextPart("word " * 6000)]),
                    Message(id="u2", session_id="s", role="user", parts=[TextPart("more")])]
    huge_history = [*long_history, Message(id="a2", session_id="s", role="assistant",
                                           parts=[TextPart("word " * 40_000)])]

    async def main() -> None:
        ollama = provider(aimock.root, tap, max_num_ctx=24576)
        try:
            for request in (ask("say hello"), ask("say hello", history=long_history),
                            ask("say hello", history=huge_history), ask("say hello")):
                events = await collect(ollama, request)
                assert events[-1] == StreamEnd("stop", "stop")
        finally:
            await ollama.aclose()

    asyncio.run(main())
    sizes = [body["options"]["num_ctx"] for body in tap.bodies("/api/chat")]
    assert sizes[0] < sizes[1] < sizes[2]
    assert sizes[2] == 24576  # capped: aimock has no /api/show, the configuration says
    assert sizes[3] == 24576  # the window never shrinks: Ollama would reload the model
    assert [r.url.path for r in tap.requests].count("/api/show") == 1  # asked once


def test_model_list_from_api_tags(aimock: Aimock) -> None:
    async def main() -> list[OllamaModel]:
        ollama = provider(aimock.root)
        try:
            return await ollama.list_models()
        finally:
            await ollama.aclose()

    models = asyncio.run(main())
    assert "gpt-4o" in [m.id for m in models]  # aimock's default list
    assert all(m.capabilities is None and m.tools is None and m.context_length is None
               for m in models)  # no /api/show there: unknown stays unknown


def test_errors_are_classified(aimock: Aimock, aimock_auth: Aimock) -> None:
    with pytest.raises(RateLimited) as limited:
        run(aimock.root, ask("limited"))
    assert limited.value.retry_after == 2 and "too many requests" in limited.value.message
    with pytest.raises(AuthError) as denied:
        run(aimock_auth.root, ask("say hello"), key="wrong-key")
    assert denied.value.status == 401 and "wrong-key" not in str(denied.value)
    assert texts(run(aimock_auth.root, ask("say hello"), key=KEY)).startswith("Hello")


# -- a local server with Ollama's real shape -------------------------------------------------

SHOW = {
    "qwen3:4b": {"details": {"family": "qwen3", "parameter_size": "4.0B",
                             "quantization_level": "Q4_K_M"},
                 "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 8192,
                                "qwen3.embedding_length": 2560},
                 "capabilities": ["completion", "tools", "thinking"]},
    "llava:7b": {"details": {"family": "llama"},
                 "model_info": {"general.architecture": "llama", "llama.context_length": 4096},
                 "capabilities": ["completion", "vision"]},
}
TAGS = {"models": [{"name": n, "model": n, "size": 2_500_000_000,
                    "details": {"family": "x", "parameter_size": "?"}} for n in SHOW]}


def show(seen: Recorded) -> Reply:
    name = seen.json().get("model")
    if name not in SHOW:
        return Reply(404, json.dumps({"error": f"model '{name}' not found"}).encode())
    return Reply(200, json.dumps(SHOW[name]).encode())


def chat(seen: Recorded) -> Reply:
    body = seen.json()
    if body["model"] not in SHOW:
        return Reply(404, json.dumps({"error": f"model '{body['model']}' not found"}).encode())
    last = body["messages"][-1]["content"]
    lines = [{"message": {"role": "assistant", "content": "", "thinking": "Short."},
              "done": False},
             {"message": {"role": "assistant", "content": "A long answ"}, "done": False}]
    if last != "cut":
        lines.append({"message": {"role": "assistant", "content": ""}, "done": True,
                      "done_reason": "length", "prompt_eval_count": 30, "eval_count": 10})
    return Reply(200, [(json.dumps(x) + "\n").encode() for x in lines],
                 {"Content-Type": "application/x-ndjson"})


ROUTES = {("POST", "/api/show"): show, ("POST", "/api/chat"): chat,
          ("GET", "/api/tags"): lambda _: Reply(200, json.dumps(TAGS).encode())}


def test_the_window_is_capped_by_the_models_context_length() -> None:
    history = [Message(id="a", session_id="s", role="assistant", model=f"local/{MODEL}",
                       parts=[TextPart("word " * 20_000)])]
    with scripted_server(ROUTES) as server:
        events = run(server.url + "/v1", ask("go", history=history))
        sent = [r for r in server.requests if r.path == "/api/chat"]
    assert sent[0].json()["options"]["num_ctx"] == 8192  # qwen3.context_length
    assert [e for e in events if isinstance(e, ReasoningChunk)] == [ReasoningChunk("Short.")]
    assert events[-1] == StreamEnd("length", "length")


def test_a_stream_cut_before_done_and_a_missing_model() -> None:
    with scripted_server(ROUTES) as server:
        with pytest.raises(RetryableError, match="before its last line"):
            run(server.url, ask("cut"))
        with pytest.raises(InvalidRequest, match=r"not found \(pull it with: ollama pull nope"):
            run(server.url, ask("x", model="nope"))


def test_model_list_with_capabilities_and_context() -> None:
    async def main(url: str) -> list[OllamaModel]:
        ollama = provider(url)
        try:
            return await ollama.list_models()
        finally:
            await ollama.aclose()

    with scripted_server(ROUTES) as server:
        models = asyncio.run(main(server.url))
    qwen, llava = models
    assert (qwen.id, qwen.context_length, qwen.tools, qwen.thinking, qwen.vision) == (
        "qwen3:4b", 8192, True, True, False)
    assert (qwen.family, qwen.parameter_size, qwen.quantization) == ("qwen3", "4.0B", "Q4_K_M")
    assert (llava.context_length, llava.tools, llava.vision, llava.completion) == (
        4096, False, True, True)
    assert qwen.size == 2_500_000_000
