"""`totem serve`: the web UI, a thin layer over the session service.

Only `totem serve` imports this package. The application is Starlette (`app.py`), served by
uvicorn in the caller's event loop, where the runs happen too (they take turns with the
requests, a step each per pass of the loop: run/pacing.py); the page is static files
(`static/`), no build step, nothing from a CDN.

    await serve(Path.cwd(), host="127.0.0.1", port=0, on_ready=print)
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from totem.server.security import is_loopback

if TYPE_CHECKING:
    from totem.server.limits import Limits
    from totem.session.service import SessionService
    from totem.store.base import Store

__all__ = ["page_url", "serve"]


def page_url(host: str, port: int, token: str) -> str:
    """The URL to open: loopback when the server listens on every address."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/?token={token}"


def listening_socket(host: str, port: int) -> socket.socket:
    """The listening socket (OSError when the address is taken or not ours)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say so, and without
    # it each answer after the first on a connection waits ~40 ms for a delayed ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]") or "0.0.0.0", port))
        sock.listen(512)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


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
    limits: Limits | None = None,
) -> None:
    """Serve the project at `root` until `stop` is set (forever when None)."""
    import uvicorn

    from totem.server.app import create_app
    from totem.server.limits import Limits
    from totem.server.protocol import with_header_timeout
    from totem.server.token import stable_token

    limits = limits or Limits()
    sock = listening_socket(host, port)
    bound = int(sock.getsockname()[1])
    token = token or stable_token()
    app = create_app(root, store=store, token=token, host=host, port=bound, limits=limits,
                     make_service=make_service)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).setLevel(logging.ERROR)  # no request lines (no tokens) logged
    config = uvicorn.Config(
        app, http=with_header_timeout(limits.header_timeout), ws="none", lifespan="on",
        log_config=None,
        access_log=False, server_header=False, date_header=False,
        timeout_keep_alive=limits.keep_alive, limit_concurrency=limits.max_connections,
        h11_max_incomplete_event_size=limits.max_header_bytes, timeout_graceful_shutdown=5,
    )
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)  # what Server.serve sets before startup
    try:
        await server.startup(sockets=[sock])
        if on_ready is not None:
            on_ready(page_url(host, bound, token))
        warming = asyncio.get_running_loop().run_in_executor(None, _warm)
        await (stop or asyncio.Event()).wait()
        await warming
    finally:
        app.state.totem.close_streams()
        await server.shutdown(sockets=[sock])


def _warm() -> None:
    """Import now, in a thread, what the page's first requests need (about 0.2 s), so that
    the first page load does not pay for it."""
    import importlib

    for name in ("yaml", "totem.session.service", "totem.session.commands",
                 "totem.agents.definitions", "totem.agents.saved", "totem.providers.registry",
                 "totem.providers.catalog.catalogue", "totem.providers.listing",
                 "totem.providers.admin", "totem.settings.user_config",
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
