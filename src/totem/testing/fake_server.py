"""A fake OpenAI-compatible HTTP server, shipped for tests, demos and the benchmark.

Pure asyncio (HTTP/1.1 with keep-alive, no dependency), zero latency. It serves

    POST /v1/chat/completions   plays the next scripted turn, streamed (SSE) or whole
    GET  /v1/models             the configured model ids
    GET  /v1/_requests          the journal: every request received, body parsed

(the `/v1` prefix is optional). Turns use the JSON format of `totem.testing.scripted`
(`{"text": ...}`, `{"tool": name, "args": {...}}`, `{"calls": [...]}`, `{"reasoning": ...,
"text": ...}`, `{"error": "rate_limited" | "server" | "auth"}`, `{"finish": "length"}`),
plus failure modes of the wire itself:

    {"error": "disconnect"}   close the connection without answering
    {"error": "cut"}          start a 200 event stream, then drop it before any output
    {"error": "malformed"}    an event stream whose chunks are not JSON
    {"error": "hang"}         never answer (until the server stops)
    {..., "cut": true}        stream the turn's output, then drop the connection
    {..., "stall": true}      stream the turn's output, then send nothing more

Past the last turn it answers with `fallback` text. Many conversations at once (a batch of
runs) each get their own script with `conversations={MARK: [turns]}`: a request whose first
user message contains MARK plays that script's turn number N, N being the number of assistant
messages the request already holds, so a conversation started again from its beginning (a
retried run) plays it again from the start. Use it as

    server = FakeOpenAIServer(turns); url = await server.start(); ...; await server.stop()
    with running_in_thread(turns) as base_url: ...          # from synchronous code
    python -m totem.testing.fake_server --port 8000 --script turns.json
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, TypeAlias

from totem.messages import Usage
from totem.providers.base import (
    AuthError,
    FatalError,
    ProviderError,
    RateLimited,
    ReasoningChunk,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
    UsageReport,
)
from totem.testing.scripted import Turn, reply, turn_from_json

__all__ = ["FakeOpenAIServer", "RecordedRequest", "ScriptItem", "running_in_thread"]

ScriptItem: TypeAlias = dict[str, Any] | Turn
Json: TypeAlias = dict[str, Any]
_WIRE_FAILURES = frozenset({"disconnect", "cut", "malformed", "hang"})


@dataclass(slots=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    raw: bytes
    body: Any  # the parsed JSON body, or None
    at: float = 0.0  # time.time() when the request was read
    done: float = 0.0  # time.time() when the answer was sent

    def journal(self) -> Json:
        return {"method": self.method, "path": self.path, "headers": self.headers,
                "body": self.body, "size": len(self.raw), "at": self.at, "done": self.done}


class _Closed(Exception):
    """The connection ends here (scripted disconnect, or the client went away)."""


class FakeOpenAIServer:
    def __init__(
        self,
        turns: Sequence[ScriptItem] = (),
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        models: Sequence[str] = ("fake-model",),
        api_key: str | None = None,
        fallback: str = "(the script has no more turns)",
        conversations: dict[str, Sequence[ScriptItem]] | None = None,
    ) -> None:
        self.turns = list(turns)
        self.conversations = {mark: list(s) for mark, s in (conversations or {}).items()}
        self.host = host
        self.port = port
        self.models = list(models)
        self.api_key = api_key  # when set, requests without this Bearer key get a 401
        self.fallback = fallback
        self.requests: list[RecordedRequest] = []
        self.url = ""
        self._played = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._stopping: asyncio.Event | None = None

    async def start(self) -> str:
        """Listen; return the base URL (`http://host:port/v1`)."""
        self._stopping = asyncio.Event()
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://{self.host}:{self.port}/v1"
        return self.url

    async def stop(self) -> None:
        if self._stopping is not None:
            self._stopping.set()
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._writers):
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    @contextlib.contextmanager
    def in_thread(self) -> Iterator[str]:
        """Run in a thread of its own with its own event loop; yield the base URL."""
        ready = threading.Event()
        state: dict[str, Any] = {}

        async def main() -> None:
            state["loop"] = asyncio.get_running_loop()
            state["done"] = done = asyncio.Event()
            try:
                await self.start()
            except Exception as exc:  # reported to the caller's thread below
                state["error"] = exc
                return
            finally:
                ready.set()
            await done.wait()
            await self.stop()

        thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
        thread.start()
        ready.wait()
        if "error" in state:
            thread.join()
            raise RuntimeError(f"the fake server did not start: {state['error']}")
        try:
            yield self.url
        finally:
            state["loop"].call_soon_threadsafe(state["done"].set)
            thread.join()

    # -- HTTP ---------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                self.requests.append(request)
                await self._respond(request, writer)
                request.done = time.time()
                if request.headers.get("connection", "").lower() == "close":
                    break
        except (_Closed, ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _respond(self, request: RecordedRequest, writer: asyncio.StreamWriter) -> None:
        path = request.path.split("?", 1)[0].removeprefix("/v1")
        if path == "/_requests" and request.method == "GET":
            return await _send_json(writer, 200, [r.journal() for r in self.requests])
        if self.api_key is not None:
            if request.headers.get("authorization") != f"Bearer {self.api_key}":
                error = {"message": "Incorrect API key provided.", "type": "invalid_request_error",
                         "code": "invalid_api_key"}
                return await _send_json(writer, 401, {"error": error})
        if path == "/models" and request.method == "GET":
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "totem"}
                    for m in self.models]
            return await _send_json(writer, 200, {"object": "list", "data": data})
        if path == "/chat/completions" and request.method == "POST":
            if not isinstance(request.body, dict):
                error = {"message": "The body is not valid JSON.", "type": "invalid_request_error"}
                return await _send_json(writer, 400, {"error": error})
            return await self._chat(request.body, writer)
        error = {"message": f"No route for {request.method} {request.path}.", "type": "not_found"}
        await _send_json(writer, 404, {"error": error})

    def _next_turn(self, body: Json) -> ScriptItem:
        script = self._conversation(body)
        if script is not None:
            index = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
            return script[index] if index < len(script) else {"text": self.fallback}
        index, self._played = self._played, self._played + 1
        return self.turns[index] if index < len(self.turns) else {"text": self.fallback}

    def _conversation(self, body: Json) -> list[ScriptItem] | None:
        """The script of the conversation whose mark is in the request's first user message."""
        if not self.conversations:
            return None
        first = next((m for m in body.get("messages") or [] if m.get("role") == "user"), None)
        content = first.get("content") if first else None
        text = content if isinstance(content, str) else json.dumps(content)
        return next((s for mark, s in self.conversations.items() if mark in text), None)

    async def _chat(self, body: Json, writer: asyncio.StreamWriter) -> None:
        item = self._next_turn(body)
        cut = isinstance(item, dict) and bool(item.get("cut"))
        stall = isinstance(item, dict) and bool(item.get("stall"))
        if isinstance(item, dict) and item.get("error") in _WIRE_FAILURES:
            return await self._wire_failure(str(item["error"]), writer)
        turn = turn_from_json(item) if isinstance(item, dict) else item
        if isinstance(turn, ProviderError):
            return await _send_error(writer, turn)
        model = str(body.get("model") or "fake-model")
        if not body.get("stream"):
            return await _send_json(writer, 200, completion(turn, model=model))
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks = stream_chunks(turn, model=model, include_usage=usage)
        if cut or stall:
            chunks = [c for c in chunks if c["choices"] and not c["choices"][0]["finish_reason"]]
        await _start_stream(writer)
        for chunk in chunks:
            writer.write(_chunked(b"data: " + _dumps(chunk) + b"\n\n"))
        if stall:  # the output, then silence until the server stops
            await writer.drain()
            assert self._stopping is not None
            await self._stopping.wait()
            raise _Closed
        if cut:
            await writer.drain()
            raise _Closed
        writer.write(_chunked(b"data: [DONE]\n\n") + b"0\r\n\r\n")
        await writer.drain()

    async def _wire_failure(self, kind: str, writer: asyncio.StreamWriter) -> None:
        if kind == "hang":
            assert self._stopping is not None
            await self._stopping.wait()
        elif kind == "cut":
            await _start_stream(writer)
            role = stream_chunks(reply(""), model="fake-model", include_usage=False)[0]
            writer.write(_chunked(b"data: " + _dumps(role) + b"\n\n"))
            await writer.drain()
        elif kind == "malformed":
            await _start_stream(writer)
            writer.write(_chunked(b'data: {"choices": [{"delta": {"content": "oops"\n\n'))
            writer.write(_chunked(b"data: [DONE]\n\n") + b"0\r\n\r\n")
            await writer.drain()
            return
        raise _Closed


# -- wire format ------------------------------------------------------------------------------


def _usage_json(usage: Usage) -> Json:
    return {
        "prompt_tokens": usage.input,
        "completion_tokens": usage.output,
        "total_tokens": usage.input + usage.output,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning},
    }


def _finish_reason(end: StreamEnd) -> str:
    return end.raw or (end.reason if end.reason != "other" else "content_filter")


def stream_chunks(events: Sequence[StreamEvent], *, model: str, include_usage: bool) -> list[Json]:
    """The `chat.completion.chunk` objects OpenAI would stream for these events."""
    cid, created = f"chatcmpl-{time.time_ns():x}", int(time.time())

    def chunk(delta: Json, finish: str | None = None) -> Json:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {"id": cid, "object": "chat.completion.chunk", "created": created,
                "model": model, "choices": [choice]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    usage: Usage | None = None
    finish = "stop"
    for event in events:
        match event:
            case TextChunk(text=text):
                chunks.append(chunk({"content": text}))
            case ReasoningChunk(text=text):
                chunks.append(chunk({"reasoning_content": text}))
            case ToolCallBegin(index=index, call_id=call_id, name=name):
                call = {"index": index, "id": call_id, "type": "function",
                        "function": {"name": name, "arguments": ""}}
                chunks.append(chunk({"tool_calls": [call]}))
            case ToolArgsChunk(index=index, text=text):
                chunks.append(chunk({"tool_calls": [{"index": index,
                                                     "function": {"arguments": text}}]}))
            case UsageReport(usage=reported):
                usage = reported
            case StreamEnd():
                finish = _finish_reason(event)
    chunks.append(chunk({}, finish))
    if include_usage:
        last = {"id": cid, "object": "chat.completion.chunk", "created": created,
                "model": model, "choices": []}
        chunks.append({**last, "usage": _usage_json(usage or Usage())})
    return chunks


def completion(events: Sequence[StreamEvent], *, model: str) -> Json:
    """The `chat.completion` object of a non-streamed answer with these events."""
    text = "".join(e.text for e in events if isinstance(e, TextChunk))
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningChunk))
    calls: dict[int, Json] = {}
    usage, finish = Usage(), "stop"
    for event in events:
        if isinstance(event, ToolCallBegin):
            calls[event.index] = {"id": event.call_id, "type": "function",
                                  "function": {"name": event.name, "arguments": ""}}
        elif isinstance(event, ToolArgsChunk) and event.index in calls:
            calls[event.index]["function"]["arguments"] += event.text
        elif isinstance(event, UsageReport):
            usage = event.usage
        elif isinstance(event, StreamEnd):
            finish = _finish_reason(event)
    message: Json = {"role": "assistant", "content": text or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
    return {"id": f"chatcmpl-{time.time_ns():x}", "object": "chat.completion",
            "created": int(time.time()), "model": model, "choices": [choice],
            "usage": _usage_json(usage)}


def _dumps(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


async def _read_request(reader: asyncio.StreamReader) -> RecordedRequest | None:
    line = await reader.readline()
    if not line.strip():
        return None
    method, target, _version = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        raw = b""
        while size := int((await reader.readline()).split(b";")[0], 16):
            raw += await reader.readexactly(size)
            await reader.readline()
        await reader.readline()
    else:
        raw = await reader.readexactly(int(headers.get("content-length") or 0))
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = None
    return RecordedRequest(method, target, headers, raw, body, time.time())


async def _send_json(
    writer: asyncio.StreamWriter, status: int, data: Any, headers: dict[str, str] | None = None
) -> None:
    payload = _dumps(data)
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", "Content-Type: application/json",
             f"Content-Length: {len(payload)}", "Connection: keep-alive"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)
    await writer.drain()


async def _send_error(writer: asyncio.StreamWriter, error: ProviderError) -> None:
    if isinstance(error, AuthError):
        status, kind = 401, "invalid_request_error"
    elif isinstance(error, RateLimited):
        status, kind = 429, "rate_limit_error"
    elif isinstance(error, FatalError):
        status, kind = error.status or 400, "invalid_request_error"
    else:
        status, kind = error.status or 500, "server_error"
    headers = {}
    retry_after = getattr(error, "retry_after", None)
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    body = {"error": {"message": error.message, "type": kind, "param": None, "code": None}}
    await _send_json(writer, status, body, headers)


async def _start_stream(writer: asyncio.StreamWriter) -> None:
    writer.write(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        b"Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    await writer.drain()


@contextlib.contextmanager
def running_in_thread(turns: Sequence[ScriptItem] = (), **options: Any) -> Iterator[str]:
    """A `FakeOpenAIServer(turns, **options)` in a thread of its own; yields the base URL."""
    with FakeOpenAIServer(turns, **options).in_thread() as url:
        yield url


def main(argv: Sequence[str] | None = None) -> None:
    import argparse
    import signal
    from pathlib import Path

    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--script", help="a JSON file with a list of turns")
    parser.add_argument("--model", action="append", help="a model id to list (repeatable)")
    args = parser.parse_args(argv)
    turns = json.loads(Path(args.script).read_text(encoding="utf-8")) if args.script else []
    server = FakeOpenAIServer(turns, host=args.host, port=args.port,
                              models=args.model or ["fake-model"])

    async def serve() -> None:
        url = await server.start()
        print(f"fake OpenAI server on {url}", flush=True)
        done = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, done.set)
        await done.wait()
        await server.stop()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
