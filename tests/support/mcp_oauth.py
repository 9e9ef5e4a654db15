"""A Python-SDK MCP server behind OAuth (tests/mcp/oauthserver.py) and a browser that signs in.

    with running_oauth_server(tmp) as (server, events):   # HttpServer 'notes', events() -> list
    browser = ChromiumSignIn()                            # an opener: await browser(url)

The browser is a real headless Chromium (Playwright's async API, since the opener runs in
totem's event loop): it opens the authorization address, presses "Allow" on the sign-in
page, and follows the redirect to totem's loopback address.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.support.ports import free_port, port_open
from tests.support.processes import running
from tests.support.required import unavailable
from tests.support.web_serve import CHROMIUM, CHROMIUM_ARGS
from totem.mcp.config import HttpServer

OAUTHSERVER = Path(__file__).resolve().parents[1] / "mcp" / "oauthserver.py"
CHROMIUM_ALLOW = Path(__file__).resolve().parent / "chromium_allow.py"

__all__ = ["CHROMIUM_ALLOW", "ChromiumSignIn", "running_oauth_server"]


@contextlib.contextmanager
def running_oauth_server(
    tmp: Path, *, name: str = "notes", token_seconds: int = 3600
) -> Iterator[tuple[HttpServer, Callable[[], list[dict[str, Any]]]]]:
    port = free_port()
    command = [sys.executable, str(OAUTHSERVER), str(port), str(token_seconds)]
    with running(command, log=tmp / f"oauthserver-{port}.log", ready=lambda: port_open(port),
                 what="the OAuth MCP server", timeout=30, env=dict(os.environ)):

        def events() -> list[dict[str, Any]]:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_events", timeout=10) as r:
                return list(json.loads(r.read()))

        yield HttpServer(name=name, url=f"http://127.0.0.1:{port}/mcp", timeout=20.0,
                         startup_timeout=20.0), events


def chromium() -> str:
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        unavailable(f"browser: {CHROMIUM} is missing (run scripts/web-test-deps.sh)",
                    required_by="TOTEM_REQUIRE_WEB")
    try:
        import playwright  # noqa: F401
    except ImportError:
        unavailable("browser: the Python package playwright is not installed (run "
                    "scripts/web-test-deps.sh)", required_by="TOTEM_REQUIRE_WEB")
    return CHROMIUM


class ChromiumSignIn:
    """Opens the address in headless Chromium and presses Allow; records what it saw."""

    def __init__(self, *, log: list[str] | None = None) -> None:
        chromium()
        self.opened: list[str] = []
        self.landed = ""  # the text of the last page (totem's loopback answer)
        self.log = log if log is not None else []

    async def __call__(self, url: str) -> None:
        from playwright.async_api import async_playwright

        self.opened.append(url)
        self.log.append("browser opened")
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM,
                                                       args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page()
                await page.goto(url)
                await page.click("#allow")
                await page.wait_for_url("http://127.0.0.1:*/callback*")
                self.landed = await page.inner_text("body")
            finally:
                await browser.close()
