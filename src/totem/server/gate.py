"""The first thing every request meets (an ASGI middleware), before any of its body is read:

- a path with a control character (a newline, a NUL...) is refused: no route matches
  `/events` followed by a newline, and no file name holds a NUL;
- `Guard`: the Host, Origin and token checks (the page itself answers a missing token with
  a styled 401 page);
- a declared body over `max_body` is refused unread; a body is then read whole, within
  `body_timeout` seconds and `max_body` bytes, and handed on.

A refusal closes the connection, so that a body nobody will read is not read either.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from totem.server.limits import Limits
from totem.server.locked import locked_page
from totem.server.security import SECURITY_HEADERS, Guard, Head

__all__ = ["Gate"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def send_refusal(send: Send, status: int, body: bytes, *, kind: str,
                       headers: dict[str, str] | None = None) -> None:
    """A complete answer that also closes the connection."""
    merged = {k.lower(): v for k, v in {**SECURITY_HEADERS, **(headers or {})}.items()}
    merged |= {k.lower(): v for k, v in (headers or {}).items()}
    merged |= {"content-type": kind, "content-length": str(len(body)), "connection": "close"}
    await send({"type": "http.response.start", "status": status,
                "headers": [(k.lower().encode(), v.encode()) for k, v in merged.items()]})
    await send({"type": "http.response.body", "body": body})


def json_error(message: str) -> bytes:
    return json.dumps({"error": message}).encode()


def _has_body(scope: Scope) -> bool:
    return any(name in (b"content-length", b"transfer-encoding") for name, _ in scope["headers"])


class Gate:
    def __init__(self, app: ASGIApp, *, guard: Guard, limits: Limits) -> None:
        self.app = app
        self.guard = guard
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            self._check_head(scope)
            body = await self._read_body(receive) if _has_body(scope) else b""
        except _Refused as refused:
            await self._refuse(scope, send, refused)
            return
        if body is None:  # the client went away
            return
        if not _has_body(scope):  # the server's own empty message stays for the application
            await self.app(scope, receive, send)
            return
        given = False

        async def replay() -> Message:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def head(self, scope: Scope) -> Head:
        from urllib.parse import parse_qsl

        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        server = scope.get("server") or ("", 0)
        port = self.guard.port or int(server[1] or 0)
        return Head(scope["method"], scope["path"], headers, query, port)

    def _check_head(self, scope: Scope) -> None:
        if _CONTROL.search(scope["path"]) or "\\" in scope["path"]:
            raise _Refused(400, "the path holds a character no route has")
        head = self.head(scope)
        refused = self.guard.refusal(head)
        if refused is not None:
            raise _Refused(400 if refused == "unknown host" else 403, f"refused: {refused}")
        declared = head.headers.get("content-length")
        if declared is not None and not declared.isdigit():
            raise _Refused(400, "Content-Length is not a number")
        if declared is not None and int(declared) > self.limits.max_body:
            raise _Refused(413, f"the body is larger than {self.limits.max_body} bytes")

    async def _read_body(self, receive: Receive) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.limits.body_timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.limits.max_body:
                        raise _Refused(413, f"the body is larger than {self.limits.max_body} "
                                       "bytes")
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        return b"".join(chunks)
        except TimeoutError:
            raise _Refused(408, "the body did not arrive in time") from None

    async def _refuse(self, scope: Scope, send: Send, refused: _Refused) -> None:
        head = self.head(scope)
        if (refused.status == 403 and "token" in str(refused) and head.path == "/"
                and head.method in ("GET", "HEAD")):
            page, csp = locked_page()
            await send_refusal(send, 401, page, kind="text/html; charset=utf-8",
                               headers={"content-security-policy": csp})
            return
        await send_refusal(send, refused.status, json_error(str(refused)),
                           kind="application/json; charset=utf-8")
