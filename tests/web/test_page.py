"""The page in a real headless Chromium (Debian's, driven by Playwright) against `totem serve`
started as a user starts it, with the scripted provider, the shipped fake OpenAI server, and
the aimock simulator streaming token by token."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.aimock import running_aimock
from tests.support.processes import no_process
from tests.support.web_page import TIMEOUT, answer_text, send, shows, wait_answer, wait_js
from tests.support.web_serve import Served, browser, openai_config, project, scripted
from totem.store.sqlite import SqliteStore
from totem.testing.fake_server import FakeOpenAIServer

pytestmark = pytest.mark.web

STORY = " ".join(f"word{i:03d}" for i in range(60))  # 479 characters, streamed 3 at a time


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with browser() as found:
        yield found


@pytest.fixture
def open_page(chromium: Any) -> Iterator[Any]:
    """`open_page(server)`: a fresh browser context on the URL the server printed."""
    contexts: list[Any] = []
    errors: list[str] = []

    def opener(server: Served) -> Any:
        context = chromium.new_context(viewport={"width": 1280, "height": 860})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(TIMEOUT)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(server.url)
        page.wait_for_selector("#chips", state="attached")
        wait_js(page, "window.totem && window.totem.info !== null")
        return page

    yield opener
    for context in contexts:
        context.close()
    # a page whose server stopped first retries its event stream: not an error of the page
    assert [e for e in errors if "ERR_CONNECTION_REFUSED" not in e] == []


def test_a_streamed_answer_appears_token_by_token_in_every_tab(
    tmp_path: Path, open_page: Any
) -> None:
    fixtures = [{"match": {"userMessage": "tell me a story"}, "response": {"content": STORY}}]
    with running_aimock(fixtures, args=["-l", "30", "-c", "3"]) as aimock, \
            Served(project(tmp_path, openai_config(aimock.url))) as server:
        page = open_page(server)
        send(page, "tell me a story")
        page.wait_for_selector("#conversation .msg-user")
        assert page.inner_text("#conversation .msg-user") == "tell me a story"
        assert page.is_visible("#abort")
        seen: list[int] = []
        second = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            length = len(answer_text(page))
            if not seen or length != seen[-1]:
                seen.append(length)
            if second is None and length > 60:  # a second tab joins mid-stream
                second = page.context.new_page()
                second.goto(page.url)
            if answer_text(page) == STORY:
                break
            time.sleep(0.02)
        assert answer_text(page) == STORY
        partial = [n for n in seen if 0 < n < len(STORY)]
        assert len(partial) >= 5, seen  # it grew step by step, not all at once
        assert second is not None
        wait_js(second, "document.querySelectorAll('#conversation > .turn').length")
        wait_answer(second, f"t => t === {STORY!r}")
        assert answer_text(second) == STORY
        page.wait_for_selector("#send:not([hidden])")
        assert page.inner_text(".session .t") == "tell me a story"


def test_reloading_mid_stream_shows_what_was_streamed_and_goes_on(
    tmp_path: Path, open_page: Any
) -> None:
    fixtures = [{"match": {"userMessage": "a long one"}, "response": {"content": STORY}}]
    with running_aimock(fixtures, args=["-l", "50", "-c", "3"]) as aimock, \
            Served(project(tmp_path, openai_config(aimock.url))) as server:
        page = open_page(server)
        send(page, "a long one")
        wait_answer(page, "t => t.length > 90")
        before = len(answer_text(page))
        assert before < len(STORY)
        page.reload()
        page.wait_for_selector("#conversation .msg-user")
        wait_answer(page, f"t => t.length >= {before}")
        after_reload = len(answer_text(page))
        assert after_reload >= before
        assert after_reload < len(STORY), "the stream should still be going after the reload"
        wait_answer(page, f"t => t === {STORY!r}")
        assert answer_text(page) == STORY  # no part twice
        assert page.inner_text("#conversation .msg-user") == "a long one"
        page.reload()  # and after the run, from the store alone
        page.wait_for_selector("#conversation .md")
        assert answer_text(page) == STORY


# The permission card is these tests' subject: their commands run outside the sandbox, so that
# each is a bash question (in the sandbox they would run unasked: tests/web/test_api.py).
ASKED = "sandbox: off\n"


def test_a_permission_question_is_answered_in_the_page_and_the_tool_runs(
    tmp_path: Path, open_page: Any
) -> None:
    turns = [{"tool": "bash", "args": {"command": "echo PERMITTED > proof.txt && echo wrote"}},
             {"text": "Wrote the proof."}]
    root = project(tmp_path, scripted(tmp_path, turns, extra=ASKED))
    with Served(root) as server:
        page = open_page(server)
        send(page, "make the proof")
        card = page.wait_for_selector(".ask")
        assert "bash" in card.inner_text() and "echo PERMITTED" in card.inner_text()
        assert not (root / "proof.txt").exists()
        page.click(".ask >> text=Allow once")
        page.wait_for_selector(".ask.done")
        assert "Allowed once" in page.inner_text(".ask.done")
        page.wait_for_selector(".tool.completed")
        page.click(".tool.completed summary")
        assert "wrote" in page.inner_text(".tool.completed pre.output")
        shows(page, "Wrote the proof.")
        assert (root / "proof.txt").read_text().strip() == "PERMITTED"


def test_the_permission_card_shows_what_always_stores_and_always_stores_it(
    tmp_path: Path, open_page: Any
) -> None:
    line = "ls | wc -l && rm -f p2.txt"
    turns = [{"tool": "bash", "args": {"command": line}}, {"text": "Removed."},
             {"tool": "bash", "args": {"command": "rm -f other.txt"}}, {"text": "Asked."}]
    root = project(tmp_path, scripted(tmp_path, turns, extra=ASKED),
                   files={"p2.txt": "x", "other.txt": "y"})
    with Served(root) as server:
        page = open_page(server)
        send(page, "clean up")
        card = page.wait_for_selector(".ask")
        assert "Always allows, in this project: ls *, wc *, rm -f p2.txt" in card.inner_text()
        page.click(".ask button >> text=Always allow")
        shows(page, "Removed.")
        assert not (root / "p2.txt").exists()
        send(page, "and the other one")
        page.wait_for_selector(".ask:not(.done)")
        assert "rm -f other.txt" in page.inner_text(".ask:not(.done)")
    assert (root / "other.txt").exists()
    store = SqliteStore(tmp_path / "data" / "totem" / "totem.db")
    stored = {rule.pattern for rule in store.remembered_rules(str(root.resolve()))}
    assert stored == {"ls *", "wc *", "rm -f p2.txt"}


def test_a_question_of_the_agent_is_answered_with_an_option(
    tmp_path: Path, open_page: Any
) -> None:
    turns = [{"tool": "ask", "args": {"question": "Which colour?", "options": ["red", "blue"]}},
             {"text": "Blue it is."}]
    fake = FakeOpenAIServer(turns, models=["m"])
    with fake.in_thread() as url, Served(project(tmp_path, openai_config(url))) as server:
        page = open_page(server)
        send(page, "paint it")
        page.wait_for_selector(".ask >> text=Which colour?")
        page.click(".ask >> button:text-is('blue')")
        shows(page, "Blue it is.")
        chats = [r.body for r in fake.requests if r.path.endswith("/chat/completions")]
        tool_messages = [m for m in chats[-1]["messages"] if m["role"] == "tool"]
        assert "blue" in str(tool_messages[-1]["content"])


def test_abort_stops_a_running_command_and_the_page_says_so(
    tmp_path: Path, open_page: Any
) -> None:
    turns = [{"tool": "bash", "args": {"command": "sleep 33.5"}}, {"text": "never shown"}]
    allow = "permission:\n  - {permission: bash, pattern: '*', action: allow}\n"
    with Served(project(tmp_path, scripted(tmp_path, turns, extra=allow))) as server:
        page = open_page(server)
        send(page, "wait a while")
        page.wait_for_selector(".tool.running")
        # the card shows as the call starts; the process follows once the work tree's
        # snapshot is taken
        deadline = time.monotonic() + 10
        while no_process("sleep 33.5") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not no_process("sleep 33.5")
        page.click("#abort")
        page.wait_for_selector(".finish.aborted")
        assert "Stopped" in page.inner_text(".finish.aborted")
        assert page.inner_text(".tool .status") == "aborted"
        page.wait_for_selector("#send:not([hidden])")
        deadline = time.monotonic() + 10
        while not no_process("sleep 33.5") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert no_process("sleep 33.5")
        assert "never shown" not in page.inner_text("#conversation")


def test_a_command_chip_fills_the_box_and_the_model_gets_the_expanded_text(
    tmp_path: Path, open_page: Any
) -> None:
    command = "---\ndescription: Review a file for bugs\n---\nReview the file $ARGUMENTS for bugs."
    fake = FakeOpenAIServer([{"text": "No bugs."}], models=["m"])
    with fake.in_thread() as url:
        root = project(tmp_path, openai_config(url),
                       files={".totem/commands/review.md": command, "app.py": "print(1)\n"})
        with Served(root) as server:
            page = open_page(server)
            chip = page.wait_for_selector(".chip[data-command=review]")
            assert chip.get_attribute("title") == "Review a file for bugs"
            chip.click()
            assert page.input_value("#prompt") == "/review "
            page.type("#prompt", "app.py")
            page.press("#prompt", "Enter")
            shows(page, "No bugs.")
            assert page.inner_text("#conversation .msg-user") == "/review app.py"
            body = next(r.body for r in fake.requests if r.path.endswith("/chat/completions"))
            users = [m["content"] for m in body["messages"] if m["role"] == "user"]
            assert "Review the file app.py for bugs." in str(users[-1])
            page.reload()  # the stored conversation shows both
            page.wait_for_selector(".msg-user details.expanded")
            assert page.inner_text("#conversation .msg-user").startswith("/review app.py")


def test_an_agent_created_in_the_agents_panel_is_used_for_a_run(
    tmp_path: Path, open_page: Any
) -> None:
    fake = FakeOpenAIServer([{"text": "Reviewed."}], models=["m"])
    with fake.in_thread() as url, Served(project(tmp_path, openai_config(url))) as server:
        page = open_page(server)
        page.click("#tabs >> text=Agents")
        page.wait_for_selector(".agent-form")
        assert page.is_visible(".agent-item >> text=explore")
        page.fill(".agent-form input[name=name]", "reviewer7")
        page.fill(".agent-form input[name=description]", "Reviews changes")
        page.fill(".agent-form textarea[name=prompt]", "You are REVIEWER-SEVEN. Be brief.")
        page.click(".agent-form >> text=Save agent")
        page.wait_for_selector(".agent-item.active >> text=reviewer7")
        page.click("#tabs >> text=Chat")
        page.wait_for_selector("#agent-picker option[value=reviewer7]", state="attached")
        page.select_option("#agent-picker", "reviewer7")
        send(page, "look at it")
        shows(page, "Reviewed.")
        body = next(r.body for r in fake.requests if r.path.endswith("/chat/completions"))
        system = body["messages"][0]
        assert system["role"] == "system" and "REVIEWER-SEVEN" in str(system["content"])


def test_a_provider_added_from_the_list_appears_in_the_model_picker(
    tmp_path: Path, open_page: Any
) -> None:
    main = FakeOpenAIServer([], models=["m"])
    extra = FakeOpenAIServer([{"text": "from the new one"}], models=["extra-model-x"])
    with main.in_thread() as url, extra.in_thread() as extra_url, \
            Served(project(tmp_path, openai_config(url))) as server:
        page = open_page(server)
        page.wait_for_selector("#model-picker option[value='mock/m']", state="attached")
        assert page.query_selector("#model-picker option[value='lcpp/extra-model-x']") is None
        page.click("#tabs >> text=Settings")
        page.wait_for_selector(".add-provider")
        page.select_option(".add-provider select[name=template]", "llamacpp")
        assert page.input_value(".add-provider input[name=url]") == "http://127.0.0.1:8080/v1"
        page.fill(".add-provider input[name=name]", "lcpp")
        page.fill(".add-provider input[name=url]", extra_url)
        page.click(".add-provider >> text=Add provider")
        page.wait_for_selector("table.providers tr[data-provider=lcpp]")
        page.wait_for_selector("table.models >> text=extra-model-x")
        row = page.inner_text("table.models tr:has-text('extra-model-x')")
        assert "unknown" in row  # what the server does not say is shown as unknown
        page.click("#tabs >> text=Chat")
        page.wait_for_selector("#model-picker option[value='lcpp/extra-model-x']",
                               state="attached")
        page.select_option("#model-picker", "lcpp/extra-model-x")
        send(page, "hello new")
        shows(page, "from the new one")
        assert any(r.path.endswith("/chat/completions") for r in extra.requests)


def test_markdown_is_drawn_and_html_in_answers_stays_text(tmp_path: Path, open_page: Any) -> None:
    answer = ("# Plan\n\nRun `make <all>` and **then** test:\n\n```python\nprint('<b>')\n```\n\n"
              "<img src=x onerror=\"document.title='pwned'\"> <script>document.title='pwned'"
              "</script> [click](javascript:document.title='pwned') [docs](https://example.org)")
    turns = [{"reasoning": "Some <i>thinking</i>.", "text": answer}]
    with Served(project(tmp_path, scripted(tmp_path, turns))) as server:
        page = open_page(server)
        send(page, "plan it")
        page.wait_for_selector("#conversation .md h1")
        md = "#conversation .turn-body > .md"
        assert page.inner_text(f"{md} h1") == "Plan"
        assert page.inner_text(f"{md} code") == "make <all>"
        assert page.inner_text(f"{md} strong") == "then"
        assert page.inner_text(f"{md} pre code") == "print('<b>')"
        assert page.query_selector(f"{md} pre .tok-f") is not None  # highlighted
        assert page.query_selector_all(f"{md} img, {md} script, {md} b, {md} i") == []
        assert "<img src=x" in page.inner_text(md)
        links = page.eval_on_selector_all(f"{md} a", "as => as.map(a => a.href)")
        assert links == ["https://example.org/"]
        assert page.is_visible("details.reasoning") and not page.is_visible(
            "details.reasoning .md")  # reasoning collapsed
        assert page.evaluate("document.title") != "pwned"
