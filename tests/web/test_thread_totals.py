"""The page's totals count a sub-agent's tokens: the snapshot of a session (`totem serve` as a
process, the scripted provider) adds its threads' usage to its own."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.web_page import TIMEOUT, send, shows, wait_js
from tests.support.web_serve import Served, browser, project, scripted

pytestmark = pytest.mark.web


def test_the_snapshot_usage_includes_the_sub_agents(tmp_path: Path) -> None:
    turns = [{"tool": "task", "args": {"agent": "general", "prompt": "count the files"}},
             {"text": "No files."}, {"text": "The agent found no files."}]
    root = project(tmp_path, scripted(tmp_path, turns))
    with Served(root) as server:
        sid = server.new_session()
        server.json("POST", f"/api/sessions/{sid}/runs", {"text": "delegate"})
        deadline = time.monotonic() + 30
        snap: dict[str, Any] = server.json("GET", f"/api/sessions/{sid}")
        while snap["live"] is not None and time.monotonic() < deadline:
            time.sleep(0.05)
            snap = server.json("GET", f"/api/sessions/{sid}")
    own = sum(m["usage"]["input"] for m in snap["messages"])
    assert own == 20 and snap["usage"]["input"] == 30  # two steps, and the agent's one


def test_the_page_counts_the_sub_agents_tokens_live(tmp_path: Path) -> None:
    turns = [{"tool": "task", "args": {"agent": "general", "prompt": "count the files"}},
             {"text": "No files."}, {"text": "The agent found no files."}]
    root = project(tmp_path, scripted(tmp_path, turns))
    with browser() as chromium, Served(root) as server:
        page = chromium.new_context().new_page()
        page.set_default_timeout(TIMEOUT)
        page.goto(server.url)
        wait_js(page, "window.totem && window.totem.info !== null")
        send(page, "delegate")
        shows(page, "The agent found no files.")
        wait_js(page, "document.querySelector('#usage').textContent.startsWith('30 in')")
        head = page.inner_text(".thread-head")
        assert head.startswith("general · ") and head.endswith(" tokens")  # shown per thread
