"""The page for daily use, in a real headless Chromium against `totem serve` started as a
user starts it: a phone-width layout with a drawer, a model server that is down, renaming,
deleting and searching sessions, no empty session stored, the token kept across restarts,
the 401 page, keyboard access, copy buttons, /compact and the provider in the model picker.

Screenshots go to the test's folder, and also to $TOTEM_WEB_SCREENSHOTS when it is set.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.ports import closed_port, free_port
from tests.support.web_page import TIMEOUT, send, shows, wait_answer, wait_js
from tests.support.web_serve import Served, browser, openai_config, project, scripted
from totem.testing.fake_server import FakeOpenAIServer

pytestmark = pytest.mark.web

LONG_TITLE = "Refactor " + "the-extraordinarily-long-module-name-" * 8 + "please"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 860}


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with browser() as found:
        yield found


@pytest.fixture
def open_page(chromium: Any) -> Iterator[Any]:
    """`open_page(server, viewport=..., permissions=...)`: a fresh context on the printed URL;
    page errors and console errors fail the test."""
    contexts: list[Any] = []
    errors: list[str] = []

    def opener(server: Served, *, viewport: dict[str, int] = DESKTOP,
               permissions: list[str] | None = None, url: str | None = None) -> Any:
        context = chromium.new_context(viewport=viewport, permissions=permissions or [])
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(TIMEOUT)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(url or server.url)
        if url is None:
            wait_js(page, "window.totem && window.totem.loadedAt !== null")
        return page

    yield opener
    for context in contexts:
        context.close()
    expected = ("ERR_CONNECTION_REFUSED", "status of 401")
    assert [e for e in errors if not any(x in e for x in expected)] == []


def _shot(page: Any, folder: Path, name: str) -> Path:
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    assert path.stat().st_size > 1000
    keep = os.environ.get("TOTEM_WEB_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return path


def _no_horizontal_overflow(page: Any) -> None:
    """Nothing wider than the window, and no view that scrolls sideways inside it (a code
    block may: it scrolls by itself)."""
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth, "
                           "document.body.scrollWidth]")
    assert widths[0] <= widths[1] and widths[2] <= widths[1], widths
    wide = page.evaluate("[...document.querySelectorAll('.view:not([hidden]) .page, "
                         ".view:not([hidden]) .conversation, .composer, .chat-head')]"
                         ".filter(el => el.offsetParent && el.scrollWidth > el.clientWidth)"
                         ".map(el => el.className)")
    assert wide == []


def _inside_viewport(page: Any, selector: str) -> None:
    box = page.locator(selector).bounding_box()
    width = page.evaluate("window.innerWidth")
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (selector, box)


def test_a_phone_sees_the_whole_page_and_the_sessions_in_a_drawer(
    tmp_path: Path, open_page: Any
) -> None:
    answer = "Done.\n\n```python\nprint('" + "x" * 200 + "')\n```\n"
    turns = [{"text": answer}, {"text": "Second answer."}]
    with Served(project(tmp_path, scripted(tmp_path, turns))) as server:
        desktop = open_page(server)
        send(desktop, LONG_TITLE)
        wait_answer(desktop, "t => t.includes('Done.')")
        desktop.wait_for_selector(f"#session-list .session[title='{LONG_TITLE[:80]}']")
        _shot(desktop, tmp_path, "desktop")
        phone = open_page(server, viewport=PHONE, url=server.url)
        wait_js(phone, "window.totem && window.totem.loadedAt !== null")
        assert not phone.is_visible("#sidebar #session-search")  # the drawer is closed
        phone.click("#menu")
        phone.wait_for_selector("#sidebar #session-search", state="visible")
        assert phone.evaluate("document.activeElement.id") == "new-session"
        phone.keyboard.press("Escape")
        phone.wait_for_selector("#sidebar #session-search", state="hidden")
        assert phone.evaluate("document.activeElement.id") == "menu"
        phone.click("#menu")
        phone.wait_for_selector("#sidebar #session-search", state="visible")
        wait_js(phone, "document.querySelector('#sidebar').getBoundingClientRect().x === 0")
        _shot(phone, tmp_path, "phone-drawer")
        phone.click("#session-list .session")
        phone.wait_for_selector("#sidebar #session-search", state="hidden")
        wait_js(phone, "document.querySelector('#conversation pre code') !== null")
        _no_horizontal_overflow(phone)
        for selector in ("#prompt", "#menu", "#rename-session", "#delete-session"):
            _inside_viewport(phone, selector)
        phone.fill("#prompt", "a second question")
        _inside_viewport(phone, "#send")
        _shot(phone, tmp_path, "phone")
        phone.click("#menu")
        phone.click("#tabs >> text=Settings")
        phone.wait_for_selector("#settings-view .page")
        phone.wait_for_selector("#sidebar", state="hidden")
        assert phone.inner_text("#topbar-title") == "Settings"
        _no_horizontal_overflow(phone)
        _shot(phone, tmp_path, "phone-settings")
        phone.click("#menu")
        phone.click("#tabs >> text=Agents")
        phone.wait_for_selector(".agent-item[data-agent='builtin/explore']")
        _no_horizontal_overflow(phone)
        phone.set_viewport_size({"width": 360, "height": 740})  # the narrowest it is made for
        phone.click("#menu")
        phone.click("#session-list .session")  # the session, whose title the top bar shows
        wait_js(phone, "document.querySelector('#topbar-title').textContent.startsWith('Refactor')")
        wait_js(phone, "document.querySelector('#conversation pre code') !== null")
        _no_horizontal_overflow(phone)
        _inside_viewport(phone, "#send")


def test_a_model_server_that_is_down_offers_retry_and_another_model(
    tmp_path: Path, open_page: Any
) -> None:
    down = f"http://127.0.0.1:{closed_port()}/v1"
    working = FakeOpenAIServer([{"text": "Answered by the working one."}], models=["w"])
    with working.in_thread() as url:
        config = openai_config(down, extra=f"  other: {{kind: openai, base_url: '{url}'}}\n")
        with Served(project(tmp_path, config)) as server:
            page = open_page(server)
            send(page, "hello there")
            page.wait_for_selector(".recovery >> text=Choose another model")
            page.wait_for_selector(".finish.error")
            page.wait_for_selector(".recovery >> text=Retry")
            page.click(".recovery >> text=Retry")
            wait_js(page, "document.querySelectorAll('#conversation .msg-user').length === 2")
            page.wait_for_selector(".recovery >> text=Choose another model")
            page.click(".recovery >> text=Choose another model")
            wait_js(page, "document.activeElement.id === 'model-picker'")
            wait_js(page, "!window.totem.chat.running")
            assert page.input_value("#prompt") == "hello there"
            page.select_option("#model-picker", "other/w")
            page.press("#prompt", "Enter")
            shows(page, "Answered by the working one.")


def test_sessions_are_stored_at_the_first_message_renamed_searched_and_deleted(
    tmp_path: Path, open_page: Any
) -> None:
    turns = [{"text": "Noted."}]  # each session plays the script from its start
    with Served(project(tmp_path, scripted(tmp_path, turns))) as server:
        page = open_page(server)
        page.click("#new-session")
        page.click("#new-session")
        assert server.json("GET", "/api/sessions")["sessions"] == []  # nothing stored yet
        send(page, "tell me about apples")
        shows(page, "Noted.")
        page.click("#new-session")
        send(page, "now boats please")
        shows(page, "now boats please")
        shows(page, "Noted.")
        assert len(server.json("GET", "/api/sessions")["sessions"]) == 2
        page.fill("#session-search", "apples")
        wait_js(page, "document.querySelectorAll('#session-list .session').length === 1")
        assert "apples" in page.inner_text("#session-list .session")
        page.fill("#session-search", "zebra")
        page.wait_for_selector("#session-list >> text=No session matches.")
        page.fill("#session-search", "")
        wait_js(page, "document.querySelectorAll('#session-list .session').length === 2")
        page.focus("#rename-session")  # by keyboard: Enter opens, Escape gives the old title
        page.keyboard.press("Enter")
        page.wait_for_selector("#rename-input")
        page.keyboard.type("ignored")
        page.keyboard.press("Escape")
        assert page.inner_text("#session-title") == "now boats please"
        page.keyboard.press("Enter")
        page.fill("#rename-input", "Boat plans")
        page.keyboard.press("Enter")
        page.wait_for_selector("#session-list .session >> text=Boat plans")
        assert page.inner_text("#session-title") == "Boat plans"
        titles = {s["title"] for s in server.json("GET", "/api/sessions")["sessions"]}
        assert titles == {"Boat plans", "tell me about apples"}
        page.once("dialog", lambda dialog: dialog.dismiss())
        page.click("#delete-session")
        assert len(server.json("GET", "/api/sessions")["sessions"]) == 2  # dismissed: kept
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#delete-session")
        wait_js(page, "document.querySelectorAll('#session-list .session').length === 1")
        assert [s["title"] for s in server.json("GET", "/api/sessions")["sessions"]] == [
            "tell me about apples"]
        assert page.evaluate("location.hash") == "#/"


def test_an_open_tab_keeps_working_when_the_server_restarts(
    tmp_path: Path, open_page: Any
) -> None:
    root = project(tmp_path, scripted(tmp_path, [{"text": "Answered."}]))  # each start
    port = free_port()
    with Served(root, args=["--port", str(port)]) as first:
        page = open_page(first)
        send(page, "first")
        shows(page, "Answered.")
        wait_js(page, "!window.totem.chat.running")
    wait_js(page, "!document.querySelector('#banner').hidden")  # the stream was cut
    with Served(root, args=["--port", str(port)]) as second:
        assert second.token == first.token
        wait_js(page, "document.querySelector('#banner').hidden")  # its stream came back
        send(page, "second")
        wait_js(page, "document.querySelectorAll('#conversation .msg-user').length === 2")
        wait_js(page, "[...document.querySelectorAll('#conversation .md')]"
                      ".filter(m => m.textContent.includes('Answered.')).length === 2")
        page.reload()
        wait_js(page, "window.totem && window.totem.loadedAt !== null")
        assert page.locator("#conversation .msg-user").count() == 2


def test_the_page_without_its_token_is_styled_within_its_policy(
    tmp_path: Path, open_page: Any
) -> None:
    with Served(project(tmp_path, scripted(tmp_path, []))) as server:
        page = open_page(server, url=f"{server.base}/")
        page.wait_for_selector("#locked")
        assert "needs its token" in page.inner_text("h1")
        radius = page.evaluate("getComputedStyle(document.querySelector('main')).borderRadius")
        assert radius == "10px"  # the inline style applied: the policy allows it by hash
        _shot(page, tmp_path, "locked")


def test_agents_rows_are_reached_and_opened_with_the_keyboard(
    tmp_path: Path, open_page: Any
) -> None:
    with Served(project(tmp_path, scripted(tmp_path, []))) as server:
        page = open_page(server)
        page.click("#tabs >> text=Agents")
        page.wait_for_selector(".agent-item[data-agent='builtin/explore']")
        page.focus(".agent-list button")  # "+ New agent", then the rows in order
        seen = []
        for _ in range(6):
            page.keyboard.press("Tab")
            seen.append(page.evaluate("document.activeElement.dataset.agent || ''"))
        assert "builtin/explore" in seen
        while page.evaluate("document.activeElement.dataset.agent") != "builtin/explore":
            page.keyboard.press("Shift+Tab")
        page.keyboard.press("Enter")
        page.wait_for_selector(".agent-item.active[data-agent='builtin/explore']")
        assert "explore" in page.inner_text(".grid2 > .card:last-child h2")
        assert page.evaluate("document.activeElement.dataset.agent") == "builtin/explore"


def test_code_blocks_have_a_copy_button(tmp_path: Path, open_page: Any) -> None:
    code = "def greet(name):\n    return f'hi {name}'"
    turns = [{"text": f"Here:\n\n```python\n{code}\n```\n\nand\n\n```\nsecond block\n```\n"}]
    with Served(project(tmp_path, scripted(tmp_path, turns))) as server:
        page = open_page(server, permissions=["clipboard-read", "clipboard-write"])
        send(page, "show code")
        page.wait_for_selector("#conversation pre .copy")
        assert page.locator("#conversation pre .copy").count() == 2
        page.click("#conversation pre .copy >> nth=0")
        wait_js(page, "document.querySelector('#conversation pre .copy.copied') !== null")
        assert page.evaluate("navigator.clipboard.readText()") == code
        page.focus("#conversation pre .copy >> nth=1")
        page.keyboard.press("Enter")
        wait_js(page, "navigator.clipboard.readText().then(t => t === 'second block')")
        assert "Copy" not in page.inner_text("#conversation pre code")
        page.reload()  # the stored answer gets its "Fork from here", reached by Tab too
        page.wait_for_selector("#conversation pre .copy")
        page.focus("#conversation pre .copy >> nth=1")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Fork from here"
        assert page.evaluate("getComputedStyle(document.activeElement).opacity") == "1"


def test_compact_runs_from_the_page(tmp_path: Path, open_page: Any) -> None:
    turns = [{"text": "First answer."}, {"text": "Second answer."},
             {"text": "The person asked twice; both were answered."}]
    with Served(project(tmp_path, scripted(tmp_path, turns))) as server:
        page = open_page(server)
        send(page, "one")
        shows(page, "First answer.")
        send(page, "two")
        shows(page, "Second answer.")
        wait_js(page, "!window.totem.chat.running")
        page.click(".chip[data-command=compact]")
        assert page.input_value("#prompt") == "/compact "
        page.press("#prompt", "Enter")
        shows(page, "Compacted: older turns are now a summary")
        wait_js(page, "!window.totem.chat.running")


def test_the_model_picker_shows_each_model_s_provider(tmp_path: Path, open_page: Any) -> None:
    one, two = FakeOpenAIServer([], models=["same-model"]), FakeOpenAIServer([], models=[
        "same-model"])
    with one.in_thread() as first, two.in_thread() as second:
        config = (f"model: alpha/same-model\nproviders:\n  alpha: {{kind: openai, base_url: "
                  f"'{first}'}}\n  beta: {{kind: openai, base_url: '{second}'}}\n")
        with Served(project(tmp_path, config)) as server:
            page = open_page(server)
            page.wait_for_selector("#model-picker option[value='beta/same-model']",
                                   state="attached")
            texts = page.eval_on_selector_all(
                "#model-picker option[value$='/same-model']", "os => os.map(o => o.text)")
            assert sorted(texts) == ["same-model — alpha", "same-model — beta"]


def test_a_message_sent_while_the_page_opens_waits_for_it(tmp_path: Path, chromium: Any) -> None:
    """Sent before the page has drawn its first view (the session list is slow to come, as
    from a PostgreSQL-backed worker), the message starts its session and is answered: the
    first view no longer clears the session the message has just made."""
    # the session list comes while the new session's own snapshot is still on its way: the
    # first view (no session in the address) used to empty the page under the new session
    slow = """
      const realFetch = window.fetch.bind(window);
      window.fetch = async (url, init) => {
        const path = String(url), get = (init || {}).method === 'GET';
        const wait = (ms) => new Promise((done) => setTimeout(done, ms));
        if (get && path.endsWith('/api/sessions')) await wait(700);
        if (get && /\\/api\\/sessions\\/[\\w-]+$/.test(path)) await wait(1500);
        return realFetch(url, init);
      };"""
    with Served(project(tmp_path, scripted(tmp_path, [{"text": "Answered at once."}]))) as server:
        context = chromium.new_context(viewport=DESKTOP)
        try:
            page = context.new_page()
            page.set_default_timeout(TIMEOUT)
            page.add_init_script(slow)
            page.goto(server.url)
            wait_js(page, "window.totem && window.totem.info !== null")
            assert page.evaluate("window.totem.loadedAt") is None  # still opening
            send(page, "hello early")
            shows(page, "Answered at once.")
            assert page.is_hidden("#banner")
        finally:
            context.close()
