"""`totem serve` as an ASGI application (Starlette): the page, its static files, the API.

    app = create_app()                     # the project in the current folder, the stable token
    uvicorn.run("totem.server.app:create_app", factory=True)   # any ASGI server can run it

Every request first meets `Gate` (gate.py): path, Host, Origin and token checks before any
body is read, then the body read whole within its size and time limits. Routes match the
whole path and nothing else (no trailing slash redirect); errors are JSON, never a
traceback. The routes themselves are in api.py.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from totem.server.api import Api
from totem.server.gate import Gate
from totem.server.limits import Limits
from totem.server.security import SECURITY_HEADERS, Guard
from totem.server.state import ServerState

if TYPE_CHECKING:
    from totem.session.service import SessionService
    from totem.store.base import Store

__all__ = ["create_app"]

log = logging.getLogger("totem.server")


def create_app(
    root: Path | None = None, *, store: Store | None = None, token: str | None = None,
    host: str = "127.0.0.1", port: int = 0, limits: Limits | None = None,
    make_service: Callable[[], SessionService] | None = None,
) -> Starlette:
    """The application for the project at `root` (the current folder when None).

    Without `store` it opens the user's and closes it when the application stops; without
    `token` it uses the stable one (token.py). `port` 0: each request's own port names the
    server in the Host check and the cookie."""
    from totem.server.token import stable_token

    owned = store is None
    if store is None:
        from totem.session.service import default_store

        store = default_store()
    state = ServerState(root or Path.cwd(), store, make_service=make_service)
    guard = Guard(token or stable_token(), host, port)
    api = Api(state, guard)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await state.open()
        try:
            yield
        finally:
            state.close_streams()
            await state.aclose()
            if owned:
                store.close()

    app = Starlette(
        routes=api.routes(),
        middleware=[Middleware(_SecurityHeaders),
                    Middleware(Gate, guard=guard, limits=limits or Limits())],
        exception_handlers={HTTPException: _http_error, Exception: _server_error},
        lifespan=lifespan,
    )
    app.router.redirect_slashes = False
    app.state.totem = state
    return app


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = {404: "not found", 405: "method not allowed"}.get(exc.status_code, exc.detail)
    return JSONResponse({"error": message}, exc.status_code, headers=exc.headers)


async def _server_error(request: Request, exc: Exception) -> Response:
    log.error("handler failed", exc_info=exc)  # the log has the traceback, the client not
    return JSONResponse({"error": f"internal error: {type(exc).__name__}"}, 500)


class _SecurityHeaders:
    """The Content-Security-Policy and its friends on every answer (the 401 page brings its
    own policy, which is kept)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.raw = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                present = {name for name, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in self.raw if k not in present]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)
