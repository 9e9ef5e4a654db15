"""Two `totem serve` workers on one real PostgreSQL, as a team runs them behind one address:
both started the same way on one data dir (so one token), each on its own port, with
`TOTEM_STORE` naming the database. A run started through worker A is shown streaming on a
page of worker B, its permission question is answered there, and the run (on A) goes on."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.aimock import fixture, running_aimock
from tests.support.postgres import PostgresServer, postgres_server
from tests.support.web_page import TIMEOUT, answer_text, send, wait_answer, wait_js
from tests.support.web_serve import Served, browser, openai_config, project, scripted

pytestmark = pytest.mark.web

STORY = " ".join(f"word{i:03d}" for i in range(60))  # 479 characters, streamed 3 at a time
PROOF = "echo PERMITTED > proof.txt && echo wrote"


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    with postgres_server() as server:
        yield server


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with browser() as found:
        yield found


def open_page(chromium: Any, url: str, errors: list[str]) -> Any:
    """A page of its own (a new browser context) at the URL a worker printed."""
    page = chromium.new_context(viewport={"width": 1280, "height": 860}).new_page()
    page.set_default_timeout(TIMEOUT)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url)
    page.wait_for_selector("#chips", state="attached")
    wait_js(page, "window.totem && window.totem.loadedAt")  # sessions listed, route taken
    return page


@contextlib.contextmanager
def proof_workers(
    tmp_path: Path, postgres: PostgresServer
) -> Iterator[tuple[Path, Served, Served]]:
    """A project whose scripted run asks to run PROOF with bash, served by two workers on a
    new database: (root, worker A, worker B)."""
    turns = [{"tool": "bash", "args": {"command": PROOF}}, {"text": "Wrote the proof."}]
    store = {"TOTEM_STORE": postgres.new_database()}
    # the relayed question is the subject: the command runs outside the sandbox, so is asked
    root = project(tmp_path, scripted(tmp_path, turns, extra="sandbox: off\n"))
    with Served(root, env_extra=store) as worker_a, Served(root, env_extra=store) as worker_b:
        yield root, worker_a, worker_b


def asked_permission(found: list[tuple[int | None, dict[str, Any]]]) -> bool:
    """An event stream's stop: a permission question has come."""
    return any(e["type"] == "permission" for _, e in found)


def lengths_until_done(page: Any) -> list[int]:
    """The answer's length each time it changed, until the whole story is there."""
    seen: list[int] = []
    deadline = time.monotonic() + 60
    while answer_text(page) != STORY and time.monotonic() < deadline:
        length = len(answer_text(page))
        if not seen or length != seen[-1]:
            seen.append(length)
        time.sleep(0.02)
    return seen


def test_a_run_started_on_worker_a_streams_and_is_answered_on_worker_b(
    tmp_path: Path, postgres: PostgresServer, chromium: Any
) -> None:
    fixtures = [
        fixture("make the proof", {"content": STORY}, match={"hasToolResult": True}),
        fixture("make the proof", {"toolCalls": [{"name": "bash",
                                                  "arguments": {"command": PROOF}}]}),
    ]
    store = {"TOTEM_STORE": postgres.new_database()}
    errors: list[str] = []
    with running_aimock(fixtures, args=["-l", "30", "-c", "3"]) as aimock:
        # the question answered on the other worker is the subject: asked outside the sandbox
        root = project(tmp_path, openai_config(aimock.url, extra="sandbox: off\n"))
        with Served(root, env_extra=store) as worker_a, Served(root, env_extra=store) as worker_b:
            assert worker_a.port != worker_b.port and worker_a.token == worker_b.token
            page_a = open_page(chromium, worker_a.url, errors)
            send(page_a, "make the proof")
            assert "echo PERMITTED" in page_a.wait_for_selector(".ask").inner_text()
            sid = wait_js(page_a, "location.hash.startsWith('#/s/') && location.hash.slice(4)")

            # worker B knows the run: listed as running, and no second run of the session
            listed = worker_b.json("GET", "/api/sessions")["sessions"]
            assert [s["running"] for s in listed if s["id"] == sid] == [True]
            assert worker_b.request("POST", f"/api/sessions/{sid}/runs", {"text": "again"})[0] \
                == 409

            page_b = open_page(chromium, worker_b.url, errors)
            page_b.goto(f"{worker_b.base}/#/s/{sid}")
            card = page_b.wait_for_selector(".ask")
            assert "bash" in card.inner_text() and "echo PERMITTED" in card.inner_text()
            assert page_b.inner_text("#conversation .msg-user") == "make the proof"
            assert page_b.is_visible("#abort")  # the page knows a run goes on
            assert not (root / "proof.txt").exists()

            page_b.click(".ask >> text=Allow once")
            page_b.wait_for_selector(".ask.done")
            assert "Allowed once" in page_b.inner_text(".ask.done")
            seen = lengths_until_done(page_b)
            assert answer_text(page_b) == STORY
            partial = [n for n in seen if 0 < n < len(STORY)]
            assert len(partial) >= 5, seen  # it reached B step by step, not all at once

            wait_answer(page_a, f"t => t === {STORY!r}")
            assert "Allowed once" in page_a.inner_text(".ask.done")  # A saw B's answer
            for page in (page_a, page_b):
                page.wait_for_selector("#send:not([hidden])")
                page.wait_for_selector(".tool.completed")
            assert (root / "proof.txt").read_text().strip() == "PERMITTED"

            page_b.reload()  # and after the run, from the store alone
            page_b.wait_for_selector("#conversation .md")
            assert answer_text(page_b) == STORY
            for page in (page_a, page_b):
                page.context.close()
    assert [e for e in errors if "ERR_CONNECTION_REFUSED" not in e] == []


def test_a_stream_cut_on_worker_a_resumes_on_worker_b_by_last_event_id(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    with proof_workers(tmp_path, postgres) as (root, worker_a, worker_b):
        sid = worker_a.new_session()
        started = worker_a.json("POST", f"/api/sessions/{sid}/runs", {"text": "make the proof"})
        first = worker_a.events(sid, after=started["after"],
                                stop=asked_permission)
        asked = first[-1][1]
        assert worker_b.json("GET", f"/api/sessions/{sid}")["live"]["after"] == started["after"]
        wrong = worker_b.request("POST", f"/api/sessions/{sid}/reply",
                                 {"request_id": "perm_none", "reply": "once"})
        assert wrong[0] == 409  # nothing waits for that one
        assert worker_b.json("POST", f"/api/sessions/{sid}/reply",
                             {"request_id": asked["request_id"], "reply": "once"})["ok"]
        rest = worker_b.events(sid, last_event_id=first[-1][0],
                               stop=lambda found: any(e["type"] == "run_finished"
                                                      for _, e in found))
        again = worker_b.events(sid, after=started["after"],
                                stop=lambda found: any(e["type"] == "run_finished"
                                                       for _, e in found))
    ids = [event_id for event_id, _ in first + rest]
    assert ids == sorted(set(ids))  # in order, nothing twice
    assert ids == [event_id for event_id, _ in again]  # and nothing lost
    types = [e["type"] for _, e in first + rest]
    assert types[0] == "user" and types[-1] == "run_finished", types
    # the answer (given on B) shows before the tool it allowed ends (on A)
    assert types.index("permission") < types.index("answered") < types.index("tool_end")
    assert rest[-1][1]["reason"] == "finished"
    assert (root / "proof.txt").read_text().strip() == "PERMITTED"


def test_a_stop_asked_on_worker_b_ends_the_run_on_worker_a(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    with proof_workers(tmp_path, postgres) as (root, worker_a, worker_b):
        sid = worker_a.new_session()
        started = worker_a.json("POST", f"/api/sessions/{sid}/runs", {"text": "make the proof"})
        worker_b.events(sid, after=started["after"],
                        stop=asked_permission)
        assert worker_b.json("POST", f"/api/sessions/{sid}/abort", {})["aborted"]
        events = worker_a.events(sid, after=started["after"],
                                 stop=lambda found: any(e["type"] == "run_finished"
                                                        for _, e in found))
        end = next(e for _, e in events if e["type"] == "run_finished")
        assert end["reason"] == "aborted", end
        assert worker_b.json("GET", f"/api/sessions/{sid}")["live"] is None
        assert not worker_b.json("POST", f"/api/sessions/{sid}/abort", {})["aborted"]
        again = worker_b.json("POST", f"/api/sessions/{sid}/runs", {"text": "once more"})
        assert again["started"]  # the session is free again, on any worker
    assert not (root / "proof.txt").exists()


def test_a_worker_starting_drops_the_relayed_events_of_runs_long_over(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    import psycopg

    url = postgres.new_database()
    root = project(tmp_path, scripted(tmp_path, []))
    with Served(root, env_extra={"TOTEM_STORE": url}):
        pass  # the first start makes the relay's tables
    week = 7 * 86400
    with psycopg.connect(url, autocommit=True) as db:
        for session, age in (("ses_old", week + 60), ("ses_recent", week - 60)):
            db.execute("INSERT INTO totem_run_events (session_id, data, created) "
                       "VALUES (%s, '{}', extract(epoch from now()) - %s)", (session, age))
    with Served(root, env_extra={"TOTEM_STORE": url}):
        with psycopg.connect(url) as db:
            kept = db.execute("SELECT session_id FROM totem_run_events").fetchall()
    assert kept == [("ses_recent",)]


def test_the_agents_panel_lists_the_agents_and_says_why_none_is_saved(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    root = project(tmp_path, scripted(tmp_path, []),
                   files={".totem/agents/reviewer.md": "---\ndescription: Reviews.\n---\nReview."})
    with Served(root, env_extra={"TOTEM_STORE": postgres.new_database()}) as worker:
        listed = worker.json("GET", "/api/agents")["agents"]
        assert {"explore", "reviewer"} <= {a["name"] for a in listed}
        status, _, body = worker.request("POST", "/api/agents", {
            "name": "helper", "description": "Helps.", "scope": "global", "prompt": "Help."})
    assert status == 400 and b"keeps no saved agents" in body


def test_a_session_whose_worker_was_killed_mid_run_is_free_on_the_other(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    with proof_workers(tmp_path, postgres) as (root, worker_a, worker_b):
        sid = worker_a.new_session()
        worker_a.json("POST", f"/api/sessions/{sid}/runs", {"text": "make the proof"})
        worker_b.events(sid, after=0,
                        stop=asked_permission)
        assert worker_b.json("GET", f"/api/sessions/{sid}")["live"] is not None
        assert worker_a.process is not None
        worker_a.process.kill()  # kill -9: no goodbye, its connections just drop
        worker_a.process.wait()
        deadline = time.monotonic() + 30
        while worker_b.json("GET", f"/api/sessions/{sid}")["live"] is not None:
            assert time.monotonic() < deadline, "the dead worker's run still holds the session"
            time.sleep(0.1)
        assert worker_b.json("POST", f"/api/sessions/{sid}/runs", {"text": "again"})["started"]
