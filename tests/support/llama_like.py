"""A tiny real HTTP server on 127.0.0.1 that answers like llama-server.

GET /props and GET /v1/models answer what a real llama-server answered (recorded from
`llama-server -m qwen2.5-coder-0.5b-instruct-q4_k_m.gguf --alias local -c 8192`, in
tests/providers/fixtures). POST /v1/chat/completions plays the next scripted answer, as
raw bytes with a status, and can drop the connection midway like a crashing server. Every
request body is kept, for the tests to read.

    with LlamaLike([sse_answer(...), Answer(400, overflow_body)]) as server:
        server.base_url    # http://127.0.0.1:PORT/v1
        server.bodies      # the JSON bodies received by /v1/chat/completions
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent.parent / "providers" / "fixtures"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@dataclass
class Answer:
    status: int
    body: bytes
    content_type: str = "application/json"
    cut: bool = False  # send the body, then close without ending the stream


def sse(*chunks: dict[str, Any], done: bool = True, raw_tail: str = "") -> bytes:
    """An event stream of `chunks`, then llama-server's `[DONE]`."""
    text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + raw_tail
    return (text + ("data: [DONE]\n\n" if done else "")).encode()


def delta(content: str | None = None, *, calls: list[dict[str, Any]] | None = None,
          finish: str | None = None) -> dict[str, Any]:
    """One chunk as llama-server streams it."""
    d: dict[str, Any] = {}
    if content is not None:
        d["content"] = content
    if calls is not None:
        d["tool_calls"] = calls
    return {"choices": [{"finish_reason": finish, "index": 0, "delta": d}],
            "created": 1796140320, "id": "chatcmpl-x", "model": "local",
            "system_fingerprint": "b1-4227c9b", "object": "chat.completion.chunk"}


def whole(content: str) -> bytes:
    """A whole (not streamed) answer, as llama-server gives it."""
    return json.dumps({
        "choices": [{"finish_reason": "stop", "index": 0,
                     "message": {"role": "assistant", "content": content}}],
        "model": "local", "object": "chat.completion",
        "usage": {"completion_tokens": 17, "prompt_tokens": 852, "total_tokens": 869},
    }).encode()


@dataclass
class LlamaLike:
    answers: Sequence[Answer]
    props: dict[str, Any] = field(default_factory=lambda: fixture("llama_server_props.json"))
    bodies: list[dict[str, Any]] = field(default_factory=list)
    gets: list[str] = field(default_factory=list)
    loading: bool = False  # answer every GET 503 "Loading model", as while a model loads

    def __enter__(self) -> LlamaLike:
        owner = self
        queue = list(self.answers)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, answer: Answer) -> None:
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                if answer.cut:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    self.wfile.write(f"{len(answer.body):x}\r\n".encode() + answer.body + b"\r\n")
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            def do_GET(self) -> None:  # noqa: N802
                owner.gets.append(self.path)
                if owner.loading:
                    return self._send(Answer(503, json.dumps({"error": {
                        "code": 503, "message": "Loading model", "type": "unavailable_error"}
                    }).encode()))
                if self.path == "/props":
                    return self._send(Answer(200, json.dumps(owner.props).encode()))
                if self.path == "/v1/models":
                    models = json.dumps(fixture("llama_server_models.json")).encode()
                    return self._send(Answer(200, models))
                return self._send(Answer(404, b'{"error":{"code":404,"message":"File Not Found"}}'))

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                owner.bodies.append(json.loads(self.rfile.read(length)))
                if not queue:
                    # 400, not 500: a test out of answers fails at once, not after retries
                    return self._send(Answer(
                        400, b'{"error":{"code":400,"message":"no more answers"}}'))
                self._send(queue.pop(0))

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


@dataclass
class RecordingProxy:
    """A pass-through to a real server on 127.0.0.1 that keeps every POSTed JSON body and
    every answer it passed back (streams are passed on as they come)."""

    target: str  # http://127.0.0.1:PORT
    bodies: list[dict[str, Any]] = field(default_factory=list)
    answers: list[bytes] = field(default_factory=list)

    def __enter__(self) -> RecordingProxy:
        import urllib.error
        import urllib.request

        owner = self
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self, data: bytes | None) -> None:
                request = urllib.request.Request(owner.target + self.path, data=data,
                                                 headers={"Content-Type": "application/json"})
                try:
                    response = opener.open(request, timeout=600)
                except urllib.error.HTTPError as exc:
                    response = exc
                self.send_response(response.status)
                self.send_header("Content-Type", response.headers.get("Content-Type", ""))
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                kept = b""
                read = getattr(response, "read1", response.read)  # read1: what has come
                with response:
                    while piece := read(65536):
                        kept += piece
                        self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                        self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                if data is not None:
                    owner.answers.append(kept)

            def do_GET(self) -> None:  # noqa: N802
                self._forward(None)

            def do_POST(self) -> None:  # noqa: N802
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.bodies.append(json.loads(data))
                self._forward(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
