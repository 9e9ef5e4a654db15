"""Folder trust and configuration errors in the page (a real headless Chromium against
`totem serve` started as a user starts it, with the shipped fake OpenAI server)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.web_page import TIMEOUT, send, shows, wait_js
from tests.support.web_serve import Served, browser
from totem.testing.fake_server import FakeOpenAIServer

pytestmark = pytest.mark.web


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with browser() as found:
        yield found


def _page(chromium: Any, server: Served) -> Any:
    page = chromium.new_context(viewport={"width": 1280, "height": 860}).new_page()
    page.set_default_timeout(TIMEOUT)
    page.goto(server.url)
    wait_js(page, "window.totem && window.totem.info")
    return page


def _folders(tmp: Path, project_config: str, url: str) -> Path:
    user = tmp / "config" / "totem"
    user.mkdir(parents=True)
    (user / "config.yaml").write_text(
        f"model: mine/m\nproviders:\n  mine: {{kind: openai, base_url: '{url}'}}\n")
    root = tmp / "project"
    (root / ".totem").mkdir(parents=True)
    (root / ".totem" / "config.yaml").write_text(project_config)
    return root


def outside(command: str) -> dict[str, Any]:
    return {"tool": "bash", "args": {"command": command, "sandbox": False,
                                     "reason": "to see trust at work"}}


def test_the_page_asks_for_trust_and_the_trusted_config_then_applies(
    tmp_path: Path, chromium: Any
) -> None:
    # Commands the model asks to run outside the sandbox: a question whatever the sandbox,
    # which only the trusted allow-all rule answers (inside it, they would run unasked).
    turns = [outside("echo ONE > one.txt"), {"text": "first done"},
             outside("echo TWO > two.txt"), {"text": "second done"}]
    fake = FakeOpenAIServer(turns, models=["m"])
    with fake.in_thread() as url:
        root = _folders(tmp_path, "maxsteps: 100000\npermission:\n"
                        "  - {permission: '*', pattern: '*', action: allow}\n", url)
        with Served(root, trusted=False) as server:
            page = _page(chromium, server)
            page.wait_for_selector("#trust:not([hidden])")
            text = page.inner_text("#trust")
            assert "allow rule: * *" in text and "maxsteps: 100000" in text
            send(page, "first")
            page.wait_for_selector(".ask")  # the allow-all rule is inert: the page asks
            page.click(".ask >> text=Reject")
            shows(page, "first done")
            assert not (root / "one.txt").exists()
            page.click("#trust-folder")
            page.wait_for_selector("#trust", state="hidden")
            trusted = json.loads((tmp_path / "data" / "totem" / "trust.json").read_text())
            assert str(root.resolve()) in trusted
            first = page.evaluate("window.totem.chat.sessionId")
            assert first
            page.click("#new-session")  # an empty chat: stored at its first message
            wait_js(page, "window.totem.chat.sessionId === null")
            send(page, "second")
            shows(page, "second done")
            assert page.evaluate("window.totem.chat.sessionId") not in (None, first)
            assert (root / "two.txt").read_text().strip() == "TWO"  # ran without asking
            assert page.query_selector(".ask") is None
            page.reload()
            wait_js(page, "window.totem && window.totem.info")
            assert page.is_hidden("#trust")


def test_an_unknown_key_is_shown_in_the_page(tmp_path: Path, chromium: Any) -> None:
    fake = FakeOpenAIServer([{"text": "never"}], models=["m"])
    with fake.in_thread() as url:
        root = _folders(tmp_path, "max_steps: 1\n", url)
        with Served(root, trusted=False) as server:
            page = _page(chromium, server)
            page.wait_for_selector("#banner:not([hidden])")
            banner = page.inner_text("#banner")
            assert "max_steps" in banner and "did you mean 'maxsteps'?" in banner
            assert "config.yaml" in banner
            page.click("#new-session")
            wait_js(page, "window.totem.session === null && window.totem.chat.sessionId === null")
            page.evaluate("window.totem.banner('')")
            send(page, "hello")  # a run says it too, and does not start
            page.wait_for_selector("#banner:not([hidden])")
            assert "did you mean 'maxsteps'?" in page.inner_text("#banner")
    assert [r for r in fake.requests if r.path.endswith("/chat/completions")] == []
