"""`totem serve`: the web UI, a thin layer over the session service.

Only `totem serve` imports this package. The HTTP layer is the standard library's asyncio
(`http.py`); the page is static files (`static/`), no build step, nothing from a CDN.

    await serve(Path.cwd(), host="127.0.0.1", port=0, on_ready=print)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from totem.server.security import is_loopback

if TYPE_CHECKING:
    from totem.session.service import SessionService
    from totem.store.base import Store

__all__ = ["page_url", "serve"]


def page_url(host: str, port: int, token: str) -> str:
    """The URL to open: loopback when the server listens on every address."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/?token={token}"


async def serve(
    root: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    on_ready: Callable[[str], None] | None = None,
    stop: asyncio.Event | None = None,
    store: Store | None = None,
    make_service: Callable[[], SessionService] | None = None,
) -> None:
    """Serve the project at `root` until `stop` is set (forever when None)."""
    from totem.server.app import App
    from totem.server.http import HttpServer
    from totem.server.security import SECURITY_HEADERS, Guard, new_token
    from totem.server.state import ServerState

    if store is None:
        from totem.session.service import default_store

        store = default_store()
    state = ServerState(root, store, make_service=make_service)
    guard = Guard(token or new_token(), host, port)
    app = App(state, guard)
    server = HttpServer(app.api, front=app.front, base_headers=SECURITY_HEADERS)
    try:
        await server.start(host, port)
    except BaseException:
        store.close()
        raise
    guard.port = server.port
    if on_ready is not None:
        on_ready(page_url(host, server.port, guard.token))
    warming = asyncio.get_running_loop().run_in_executor(None, _warm)
    try:
        await (stop or asyncio.Event()).wait()
        await warming
    finally:
        await server.stop()
        await state.aclose()
        store.close()


def _warm() -> None:
    """Import now, in a thread, what the page's first requests need (about 0.2 s), so that
    the first page load does not pay for it."""
    import importlib

    for name in ("yaml", "totem.session.service", "totem.session.commands",
                 "totem.agents.definitions", "totem.agents.saved", "totem.providers.registry",
                 "totem.providers.catalog.catalogue", "totem.providers.listing",
                 "totem.settings.provider_admin", "totem.settings.user_config",
                 "totem.tools.registry"):
        importlib.import_module(name)


def warning_for(host: str) -> str | None:
    """The loud warning for a server reachable from other computers; None on loopback."""
    if is_loopback(host):
        return None
    return (
        f"WARNING: totem serve listens on {host}: other computers can reach it. Anyone who "
        "has the token can read this project, change its files and run commands in it. "
        "Use it only on a network you trust; the default (127.0.0.1) is safer."
    )
