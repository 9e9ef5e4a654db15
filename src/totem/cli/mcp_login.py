"""`totem mcp login NAME` and `totem mcp logout NAME`: OAuth sign-in ahead of the runs.

A headless run cannot open a browser; signing in once here stores the tokens in the key
store (0600), and every later run uses them, refreshing them when they expire. The command
is the person's consent to the sign-in, so no question comes before the browser opens.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["login", "logout"]


def _http_server(config: Any, name: str) -> Any:
    from totem.mcp.config import HttpServer

    server = config.servers.get(name)
    if server is None:
        known = ", ".join(sorted(config.servers)) or "none"
        print(f"totem: no MCP server named '{name}' (configured: {known})", file=sys.stderr)
        return None
    if not isinstance(server, HttpServer):
        print(f"totem: the MCP server '{name}' runs a command (stdio); only HTTP servers "
              "sign in with OAuth", file=sys.stderr)
        return None
    if not server.oauth.enabled:
        print(f"totem: OAuth is turned off for the MCP server '{name}' (oauth: false, or an "
              "Authorization header is configured)", file=sys.stderr)
        return None
    return server


async def login(root: Path, config: Any, args: argparse.Namespace) -> int:
    """Sign in (the browser, or the printed address with --no-browser), list the tools."""
    from totem.events import Event, Notice
    from totem.mcp.manager import McpManager
    from totem.mcp.oauth_store import KeyStoreTokens
    from totem.policy.permission import PermissionService

    server = _http_server(config, args.name)
    if server is None:
        return 2
    KeyStoreTokens(server.name, server.url).forget()  # a fresh sign-in, not the old tokens

    def emit(event: Event) -> None:
        if isinstance(event, Notice):
            print(f"! {event.text}" if event.level == "warning" else event.text, file=sys.stderr)

    async def consent(name: str, where: str) -> bool:
        return True

    async def no_browser(url: str) -> None:
        return None  # the address was printed (a notice); the person opens it

    permission = PermissionService(rules=[], mode="yes", project=str(root))
    manager = McpManager(root, {server.name: server}, permission=permission, emit=emit,
                         sign_in=consent, open_url=no_browser if args.no_browser else None)
    manager.start_notices = False
    try:
        await manager.start()
        row = manager.status()[0]
    finally:
        await manager.aclose()
    if row.state != "ready":
        print(f"totem: signing in to '{server.name}' failed: {row.detail}", file=sys.stderr)
        return 1
    signed = KeyStoreTokens(server.name, server.url).signed_in()
    print(f"Signed in to '{server.name}'" + (
        "; its tokens are in the key store, and later runs use them." if signed else
        " (it asked for no sign-in).") + f" {len(row.tools)} tools.")
    return 0


async def logout(config: Any, name: str) -> int:
    from totem.mcp.oauth_store import KeyStoreTokens

    server = _http_server(config, name)
    if server is None:
        return 2
    forgot = KeyStoreTokens(server.name, server.url).forget()
    print(f"Forgot the tokens of '{name}'." if forgot else f"No tokens stored for '{name}'.")
    return 0
