"""A small HTTP/1.1 server on asyncio streams: enough for one page and its API, no dependency.

    server = HttpServer(handler, front=quick)   # handler: async (Request) -> Response | EventStream
    await server.start("127.0.0.1", 0)         # server.port is the port it got
    ...
    await server.stop()

Requests are read whole (bodies up to `MAX_BODY`), keep-alive is honoured, and an
`EventStream` response (server-sent events) holds its connection until the stream ends or
the client goes away, which is noticed at once (end of file on the socket).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, TypeAlias, TypeVar
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = ["EventStream", "HttpServer", "Request", "Response", "json_response"]

MAX_BODY = 8 * 1024 * 1024
MAX_HEADER_LINES = 100
HEADER_TIMEOUT = 30.0  # seconds an idle keep-alive connection may wait for its next request


@dataclass(slots=True)
class Request:
    method: str
    path: str  # decoded, without the query
    query: dict[str, str]
    headers: dict[str, str]  # names in lower case
    body: bytes = b""

    def json(self) -> Any:
        """The body as JSON; ValueError when it is not."""
        return json.loads(self.body or b"null")

    def cookie(self, name: str) -> str | None:
        for item in self.headers.get("cookie", "").split(";"):
            key, _, value = item.strip().partition("=")
            if key == name:
                return value
        return None


@dataclass(slots=True)
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class EventStream:
    """A `text/event-stream` answer: each item of `chunks` is written as it comes."""

    chunks: AsyncGenerator[bytes, None]
    headers: dict[str, str] = field(default_factory=dict)


Handler: TypeAlias = Callable[[Request], Awaitable[Response | EventStream]]
FrontHandler: TypeAlias = Callable[[Request], Response | None]
T = TypeVar("T")
log = logging.getLogger("totem.server")


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    return Response(status, body, "application/json; charset=utf-8", dict(headers or {}))


class _BadRequest(Exception):
    pass


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """The next request on the connection; None when the client closed it."""
    line = await asyncio.wait_for(reader.readline(), HEADER_TIMEOUT)
    while line in (b"\r\n", b"\n"):  # tolerated between keep-alive requests
        line = await reader.readline()
    if not line:
        return None
    try:
        method, target, _version = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    except ValueError:
        raise _BadRequest("malformed request line") from None
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADER_LINES):
        header = await reader.readline()
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    else:
        raise _BadRequest("too many headers")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise _BadRequest("chunked request bodies are not supported")
    length = int(headers.get("content-length") or 0)
    if length < 0 or length > MAX_BODY:
        raise _BadRequest("request body too large")
    body = await reader.readexactly(length) if length else b""
    parts = urlsplit(target)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return Request(method.upper(), unquote(parts.path) or "/", query, headers, body)


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class HttpServer:
    """Connections are served by a thread of their own (the front) with its own event loop.

    `front(request)` answers there at once when it can (the page, static files, refusals:
    nothing that touches the sessions); every other request is handed to `handler` on the
    loop that called `start` (the main loop, where runs happen), and so is each chunk of an
    event stream. A main loop busy with many runs thus never delays the page itself.
    """

    def __init__(
        self, handler: Handler, *, front: FrontHandler | None = None,
        base_headers: dict[str, str] | None = None,
    ) -> None:
        self.handler = handler
        self.front = front
        self.base_headers = dict(base_headers or {})
        self.port = 0
        self._main: asyncio.AbstractEventLoop | None = None
        self._front_loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed: asyncio.Event | None = None  # on the front loop
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self, host: str, port: int) -> None:
        """Listen (in the front thread); raises what binding raised (OSError...)."""
        self._main = asyncio.get_running_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        async def front() -> None:
            self._front_loop = asyncio.get_running_loop()
            self._closed = asyncio.Event()
            try:
                server = await asyncio.start_server(self._serve, host, port, limit=1 << 16)
            except BaseException as exc:  # reported to the caller of start()
                failure.append(exc)
                ready.set()
                return
            self.port = server.sockets[0].getsockname()[1]
            ready.set()
            async with server:
                await self._closed.wait()
                server.close()
                for task in list(self._connections):
                    task.cancel()
                await asyncio.gather(*self._connections, return_exceptions=True)

        self._thread = threading.Thread(target=asyncio.run, args=(front(),),
                                        name="totem-serve-front", daemon=True)
        self._thread.start()
        await asyncio.to_thread(ready.wait)
        if failure:
            await asyncio.to_thread(self._thread.join)
            raise failure[0]

    async def stop(self) -> None:
        if self._front_loop is not None and self._closed is not None:
            with contextlib.suppress(RuntimeError):  # its loop is already gone
                self._front_loop.call_soon_threadsafe(self._closed.set)
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 10)

    async def _on_main(self, awaitable: Awaitable[T]) -> T:
        """Run `awaitable` on the main loop; cancelling this cancels it there."""
        assert self._main is not None

        async def run() -> T:
            return await awaitable

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(run(), self._main))

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                try:
                    request = await read_request(reader)
                except _BadRequest as exc:
                    await self._write(writer, Response(400, str(exc).encode()), keep=False)
                    break
                if request is None:
                    break
                answer = await self._answer(request)
                keep = request.headers.get("connection", "").lower() != "close"
                if isinstance(answer, EventStream):
                    await self._stream(reader, writer, answer)
                    break
                await self._write(writer, answer, keep=keep, head_only=request.method == "HEAD")
                if not keep:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError, ValueError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _answer(self, request: Request) -> Response | EventStream:
        try:
            quick = self.front(request) if self.front is not None else None
            if quick is not None:
                return quick
            return await self._on_main(self.handler(request))
        except Exception as exc:  # a bug in a handler must not take the server down
            log.exception("handler failed")
            return json_response({"error": f"internal error: {type(exc).__name__}"}, 500)

    async def _write(
        self, writer: asyncio.StreamWriter, response: Response, *, keep: bool,
        head_only: bool = False,
    ) -> None:
        headers = {**self.base_headers, "Content-Type": response.content_type,
                   "Content-Length": str(len(response.body)),
                   "Connection": "keep-alive" if keep else "close", **response.headers}
        writer.write(_head(response.status, headers) + (b"" if head_only else response.body))
        await writer.drain()

    async def _stream(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, stream: EventStream
    ) -> None:
        headers = {**self.base_headers, "Content-Type": "text/event-stream; charset=utf-8",
                   "Cache-Control": "no-store", "Connection": "close",
                   "X-Accel-Buffering": "no", **stream.headers}
        writer.write(_head(200, headers))
        gone = asyncio.ensure_future(reader.read(1))  # b"" (or an error) when the client leaves
        chunks = stream.chunks

        async def pump() -> None:
            while True:
                try:
                    chunk = await self._on_main(anext(chunks))
                except StopAsyncIteration:
                    return
                writer.write(chunk)
                await writer.drain()

        pumping = asyncio.ensure_future(pump())
        try:
            await asyncio.wait({gone, pumping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (gone, pumping):
                task.cancel()
            await asyncio.gather(gone, pumping, return_exceptions=True)
            with contextlib.suppress(Exception):
                await self._on_main(chunks.aclose())
