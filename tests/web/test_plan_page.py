"""Plan mode and hooks on the page, in a real headless Chromium against `totem serve`
with the scripted provider: the mode switch, the plan shown with its steps, the model's write
refused in plan mode, approving the edited plan (the session goes on in the normal mode with
the steps as its task list), and the hooks listed in Settings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.web_page import TIMEOUT, send, shows, wait_answer, wait_js
from tests.support.web_serve import Served, browser, project, scripted

pytestmark = pytest.mark.web

PLAN = "A greeting.\n\n1. Create hello.txt\n2. Check it"
WRITE = {"tool": "write", "args": {"path": "hello.txt", "content": "hi\n"}}


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with browser() as found:
        yield found


def test_the_mode_switch_plans_then_the_approved_plan_is_carried_out(
        tmp_path: Path, chromium: Any) -> None:
    hooks = "hooks: {post_tool: [{matcher: write, command: 'true', timeout: 5}]}\n"
    config = scripted(tmp_path, [WRITE, {"text": PLAN}, WRITE, {"text": "Made hello.txt."}],
                      extra="knowledge: {totaljs: never, forge: false}\n" + hooks)
    root = project(tmp_path, config)
    errors: list[str] = []
    with Served(root) as server:
        context = chromium.new_context(viewport={"width": 1280, "height": 860})
        page = context.new_page()
        page.set_default_timeout(TIMEOUT)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(server.url)
        wait_js(page, "window.totem && window.totem.info !== null")
        assert page.eval_on_selector_all("#mode-picker option", "os => os.map(o => o.value)") \
            == ["default", "plan", "accept_edits"]
        page.select_option("#mode-picker", "plan")
        send(page, "add a greeting")
        page.wait_for_selector(".plan-card")
        shows(page, "not available in plan mode")  # the model's write, refused
        assert not (root / "hello.txt").exists()
        steps = page.locator(".plan-card .plan-steps")
        assert steps.input_value() == "Create hello.txt\nCheck it"
        steps.fill("Create hello.txt with hi\nCheck it\nSay so")  # edited before approving
        page.click(".plan-card >> text=Approve the plan")
        page.click(".ask >> text=Allow once")  # the normal mode asks before the write
        wait_answer(page, "t => t.includes('Made hello.txt.')")
        assert (root / "hello.txt").read_text() == "hi\n"
        assert page.input_value("#mode-picker") == "default"
        todos = page.inner_text("#todos")
        assert "Create hello.txt with hi" in todos and "Say so" in todos
        page.click("#tabs >> text=Settings")
        page.wait_for_selector(".card.hooks tr[data-hook='post_tool']")
        row = page.inner_text(".card.hooks tr[data-hook='post_tool']")
        assert "write" in row and "true" in row and "project" in row
        context.close()
    assert errors == []
