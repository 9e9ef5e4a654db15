"""Real HTTP servers on 127.0.0.1 for the tests (stdlib, in a thread), and a recording
httpx transport.

    with serving(respond) as server:        # respond(Recorded) -> Reply, for every request
        server.url, server.requests         # http://127.0.0.1:PORT, what it received

`scripted_server(routes)` answers `(method, path)` with a handler of the request (JSON by
default, 404 for any other route); `http_server(routes)` answers by path alone with a fixed
`Reply` or a function of the path with its query, and records those paths.

A `Reply` body given as a list of byte strings is written piece by piece, and the connection
closed after it (HTTP/1.0 style), the way a streaming server ends; `delay` waits before
answering.

`Tap`: an httpx transport that records the requests it forwards to the real network, so a
test can read the exact body that reached aimock (whose journal shows only its own
conversion of some bodies).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

__all__ = ["PathServer", "Recorded", "Reply", "Server", "Tap", "http_server", "scripted_server",
           "serving", "sse"]

JSON = {"Content-Type": "application/json"}


@dataclass(slots=True)
class Recorded:
    """One request as the server received it."""

    method: str
    path: str  # without the query
    query: dict[str, list[str]]
    headers: dict[str, str]  # names in lower case
    body: bytes
    target: str = ""  # the path with its query, as sent

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(slots=True)
class Reply:
    """What the server answers: a status, a body (bytes, or pieces to stream), headers."""

    status: int = 200
    body: bytes | list[bytes] = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering


Respond = Callable[[Recorded], Reply]


@dataclass(slots=True)
class Server:
    url: str  # http://127.0.0.1:PORT
    requests: list[Recorded]


def sse(chunks: list[dict[str, Any]]) -> Reply:
    """An SSE answer, one `data:` event per chunk."""
    return Reply(200, [f"data: {json.dumps(c)}\r\n\r\n".encode() for c in chunks],
                 {"Content-Type": "text/event-stream"})


def _handler(respond: Respond, requests: list[Recorded]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            parts = urlsplit(self.path)
            size = int(self.headers.get("Content-Length") or 0)
            seen = Recorded(self.command, parts.path, parse_qs(parts.query),
                            {k.lower(): v for k, v in self.headers.items()},
                            self.rfile.read(size) if size else b"", self.path)
            requests.append(seen)
            reply = respond(seen)
            if reply.delay:
                time.sleep(reply.delay)
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if isinstance(reply.body, bytes):
                self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            try:
                for piece in [reply.body] if isinstance(reply.body, bytes) else reply.body:
                    self.wfile.write(piece)
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped reading, as fetch does past its size limit

        do_GET = do_POST = do_PUT = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextlib.contextmanager
def serving(respond: Respond) -> Iterator[Server]:
    """A real HTTP server on a free loopback port that answers every request with
    `respond(request)`, for the length of the `with`."""
    requests: list[Recorded] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(respond, requests))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{server.server_address[1]}", requests)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextlib.contextmanager
def scripted_server(routes: Mapping[tuple[str, str], Respond]) -> Iterator[Server]:
    """Answers `(method, path)` with its handler (JSON unless the reply says otherwise)."""

    def respond(seen: Recorded) -> Reply:
        handler = routes.get((seen.method, seen.path))
        reply = handler(seen) if handler else Reply(404, b'{"error": "no route"}')
        return Reply(reply.status, reply.body, {**JSON, **reply.headers}, reply.delay)

    with serving(respond) as server:
        yield server


Route = Callable[[str], Reply]  # the request's path with its query -> the reply


@dataclass(slots=True)
class PathServer:
    base: str  # http://127.0.0.1:PORT
    requests: list[str]  # paths with query, in order


@contextlib.contextmanager
def http_server(routes: Mapping[str, Reply | Route]) -> Iterator[PathServer]:
    """Answers `routes` by path (query ignored), 404 for any other."""

    targets: list[str] = []

    def respond(seen: Recorded) -> Reply:
        targets.append(seen.target)
        route = routes.get(seen.path)
        reply = route(seen.target) if callable(route) else route
        if reply is None:
            return Reply(404, b"not here", {"Content-Type": "text/plain"})
        return reply

    with serving(respond) as server:
        yield PathServer(server.url, targets)


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
