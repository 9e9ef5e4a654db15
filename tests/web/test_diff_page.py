"""The diff of a file change in the page (real Chromium, `totem serve` as a process): the
permission card shows the unified diff, and the finished call its diff stat and diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.web_page import TIMEOUT, send, shows, wait_js
from tests.support.web_serve import Served, browser, project, scripted

pytestmark = pytest.mark.web


def test_the_permission_card_shows_the_diff_and_the_tool_its_stat(tmp_path: Path) -> None:
    before = "".join(f"line {i}\n" for i in range(1, 90))
    turns = [{"tool": "read", "args": {"path": "a.txt"}},
             {"tool": "edit", "args": {"path": "a.txt", "old_string": "line 2\n",
                                       "new_string": "line two\n"}},
             {"text": "Edited."}]
    root = project(tmp_path, scripted(tmp_path, turns), files={"a.txt": before})
    with browser() as chromium, Served(root) as server:
        page = chromium.new_context(viewport={"width": 1100, "height": 800}).new_page()
        page.set_default_timeout(TIMEOUT)
        page.goto(server.url)
        wait_js(page, "window.totem && window.totem.info !== null")
        send(page, "rename line 2")
        card = page.wait_for_selector(".ask pre.diff")
        assert page.inner_text(".ask pre.diff .diff-del").strip() == "-line 2"
        assert page.inner_text(".ask pre.diff .diff-add").strip() == "+line two"
        assert "--- a/a.txt" in card.inner_text() and "+++ b/a.txt" in card.inner_text()
        if os.environ.get("TOTEM_SCREENSHOTS"):
            page.screenshot(path=str(Path(os.environ["TOTEM_SCREENSHOTS"]) / "diff-card.png"))
        page.click(".ask >> text=Allow once")
        shows(page, "Edited.")
        status = page.inner_text(".tool.completed[data-tool=edit] summary")
        assert "+1 -1" in status
        assert page.eval_on_selector_all(".tool.completed pre.diff", "d => d.length") == 1
        page.reload()
        page.wait_for_selector(".tool.completed[data-tool=edit]")
        assert "+1 -1" in page.inner_text(".tool.completed[data-tool=edit] summary")
    assert (root / "a.txt").read_text().startswith("line 1\nline two\n")


def test_a_long_diff_is_cut_with_a_count(tmp_path: Path) -> None:
    content = "".join(f"row {i}\n" for i in range(200))
    turns = [{"tool": "write", "args": {"path": "big.txt", "content": content}},
             {"text": "Written."}]
    root = project(tmp_path, scripted(tmp_path, turns))
    with browser() as chromium, Served(root) as server:
        page = chromium.new_context().new_page()
        page.set_default_timeout(TIMEOUT)
        page.goto(server.url)
        wait_js(page, "window.totem && window.totem.info !== null")
        send(page, "write big")
        page.wait_for_selector(".ask pre.diff")
        more = page.inner_text(".ask pre.diff .diff-more")
        assert more == "… 143 more lines of the diff"  # 203 diff lines, 60 shown
        page.click(".ask >> text=Reject")
        wait_js(page, "!!document.querySelector('.ask.done')")
    assert not (root / "big.txt").exists()


def test_the_undo_and_redo_buttons_put_the_files_back_and_say_so(tmp_path: Path) -> None:
    turns = [{"tool": "write", "args": {"path": "new.txt", "content": "made\n"}},
             {"text": "Made it."}]
    allow = "permission:\n  - {permission: edit, pattern: '*', action: allow}\n"
    root = project(tmp_path, scripted(tmp_path, turns, extra=allow))
    with browser() as chromium, Served(root) as server:
        page = chromium.new_context().new_page()
        page.set_default_timeout(TIMEOUT)
        page.goto(server.url)
        wait_js(page, "window.totem && window.totem.info !== null")
        send(page, "make new.txt")
        shows(page, "Made it.")
        assert (root / "new.txt").exists()
        wait_js(page, "document.querySelector('#abort').hidden")
        page.click("#undo-session")
        shows(page, "removed new.txt")
        assert not (root / "new.txt").exists()
        page.reload()
        shows(page, "undid the file changes")  # the note to the model, kept in the session
        page.click("#undo-session")
        wait_js(page, "document.querySelector('#banner').textContent.startsWith('Undo: ')")
        assert "Nothing to undo" in page.inner_text("#banner")
        page.click("#redo-session")  # the undone write is made again
        shows(page, "Redid")
        assert (root / "new.txt").read_text() == "made\n"
