"""Small real HTTP helpers for adapter tests where aimock has no endpoint or hides the wire.

`scripted_server(routes)`: a real HTTP server on 127.0.0.1 (stdlib, in a thread) that
answers `(method, path)` with a handler and records every request it received, raw body
included. A handler returns `Reply(status, body, headers)`; a body given as a list of byte
strings is written piece by piece, and the connection closed after it (HTTP/1.0 style), the
way a streaming server ends.

`Tap`: an httpx transport that records the requests it forwards to the real network, so a
test can read the exact body that reached aimock (whose journal shows only its own
conversion of Gemini and Ollama bodies).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

__all__ = ["Recorded", "Reply", "Tap", "scripted_server", "sse"]


@dataclass(slots=True)
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(slots=True)
class Reply:
    status: int = 200
    body: bytes | list[bytes] = b""
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Recorded], Reply]


def sse(chunks: list[dict[str, Any]]) -> Reply:
    """An SSE answer, one `data:` event per chunk."""
    return Reply(200, [f"data: {json.dumps(c)}\r\n\r\n".encode() for c in chunks],
                 {"Content-Type": "text/event-stream"})


@dataclass(slots=True)
class Server:
    url: str
    requests: list[Recorded]


@contextlib.contextmanager
def scripted_server(routes: Mapping[tuple[str, str], Handler]) -> Iterator[Server]:
    requests: list[Recorded] = []

    class Handle(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            parts = urlsplit(self.path)
            size = int(self.headers.get("Content-Length") or 0)
            seen = Recorded(self.command, parts.path, parse_qs(parts.query),
                            {k.lower(): v for k, v in self.headers.items()},
                            self.rfile.read(size) if size else b"")
            requests.append(seen)
            handler = routes.get((self.command, parts.path))
            reply = handler(seen) if handler else Reply(404, b'{"error": "no route"}')
            self.send_response(reply.status)
            headers = {"Content-Type": "application/json", **reply.headers}
            for name, value in headers.items():
                self.send_header(name, value)
            if isinstance(reply.body, bytes):
                self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            for piece in [reply.body] if isinstance(reply.body, bytes) else reply.body:
                self.wfile.write(piece)
                self.wfile.flush()

        do_GET = do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handle)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{server.server_address[1]}", requests)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class Tap(httpx.AsyncBaseTransport):
    """Forwards to the network and keeps every request (method, URL, headers, body)."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        self.requests.append(request)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def bodies(self, path_part: str = "") -> list[Any]:
        return [json.loads(r.content) for r in self.requests
                if path_part in r.url.path and r.content]
