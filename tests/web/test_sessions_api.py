"""Sessions through the API: renamed, deleted (with their messages, not while they run, not
their forks), searched in their titles and texts, and `/compact` as a run of its own."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.web_serve import Served, finished, project, scripted

TURNS: list[dict[str, Any]] = [{"text": "Apples are red."}, {"text": "Boats float."},
                               {"text": "Summary: fruit and boats."}]


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("sessions")
    extra = "permission:\n  - {permission: bash, pattern: '*', action: allow}\n"
    with Served(project(tmp, scripted(tmp, TURNS, extra=extra))) as served:
        yield served


def _run(server: Served, sid: str, text: str) -> list[tuple[int | None, dict[str, Any]]]:
    start = server.json("POST", f"/api/sessions/{sid}/runs", {"text": text})
    events = server.events(sid, after=start["after"], stop=finished)
    deadline = time.monotonic() + 30
    while server.json("GET", f"/api/sessions/{sid}")["live"] is not None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return events


def test_a_session_is_renamed(server: Served) -> None:
    sid = server.new_session()
    renamed = server.json("PATCH", f"/api/sessions/{sid}", {"title": "  Plans   for\tboats "})
    assert renamed["session"]["title"] == "Plans for boats"
    assert server.json("GET", f"/api/sessions/{sid}")["session"]["title"] == "Plans for boats"
    for bad in ({"title": ""}, {"title": "x" * 201}, {"title": 3}, {"name": "x"}):
        assert server.request("PATCH", f"/api/sessions/{sid}", bad)[0] == 400, bad
    assert server.request("PATCH", "/api/sessions/ses_nope", {"title": "x"})[0] == 404


def test_sessions_are_searched_in_titles_and_texts(server: Served) -> None:
    pears, boats = server.new_session(), server.new_session()  # both answered "Apples are red."
    _run(server, pears, "tell me about pears")
    _run(server, boats, "and boats 100%")
    server.json("PATCH", f"/api/sessions/{boats}", {"title": "Harbour_notes"})

    def found(query: str) -> set[str]:
        listed = server.json("GET", f"/api/sessions?q={query}")["sessions"]
        return {s["id"] for s in listed}

    assert found("PEARS") == {pears}
    assert found("red") == {pears, boats}  # in the answers, not the titles
    assert found("harbour") == {boats}
    assert found("pears+red") == {pears} and found("pears+boats") == set()
    assert found("100%25") == {boats} and found("%25") == {boats}  # % is a character
    assert found("r_d") == set()  # _ is a character too, not "any one"
    assert {pears, boats} <= found("")


def test_a_session_is_deleted_with_its_messages_and_its_forks_stay(server: Served) -> None:
    sid = server.new_session()
    _run(server, sid, "tell me about apples")
    fork = server.json("POST", f"/api/sessions/{sid}/fork", {})["session"]["id"]
    assert server.json("DELETE", f"/api/sessions/{sid}")["ok"]
    assert server.request("GET", f"/api/sessions/{sid}")[0] == 404
    assert server.request("DELETE", f"/api/sessions/{sid}")[0] == 404
    listed = {s["id"]: s for s in server.json("GET", "/api/sessions")["sessions"]}
    assert sid not in listed and listed[fork]["parent_id"] is None
    assert len(server.json("GET", f"/api/sessions/{fork}")["messages"]) == 2
    db = sqlite3.connect(server.home / "data" / "totem" / "totem.db")
    try:
        left = db.execute("SELECT COUNT(*) FROM messages WHERE session_id = ?", (sid,))
        assert left.fetchone()[0] == 0
    finally:
        db.close()


def test_a_running_session_is_not_deleted(tmp_path_factory: pytest.TempPathFactory) -> None:
    tmp = tmp_path_factory.mktemp("busy")
    turns = [{"tool": "bash", "args": {"command": "sleep 30"}}, {"text": "never"}]
    extra = "permission:\n  - {permission: bash, pattern: '*', action: allow}\n"
    with Served(project(tmp, scripted(tmp, turns, extra=extra))) as server:
        sid = server.new_session()
        start = server.json("POST", f"/api/sessions/{sid}/runs", {"text": "wait"})
        server.events(sid, after=start["after"],
                      stop=lambda es: any(e["type"] == "tool_start" for _, e in es))
        status, _, body = server.request("DELETE", f"/api/sessions/{sid}")
        assert status == 409 and b"stop the run" in body
        server.json("POST", f"/api/sessions/{sid}/abort", {})


def test_compact_from_the_api_summarizes_the_older_turns(server: Served) -> None:
    sid = server.new_session()
    early = server.new_session()
    nothing = _run(server, early, "/compact")
    assert any(e["type"] == "notice" and "Nothing to compact" in e["text"] for _, e in nothing)
    _run(server, sid, "tell me about apples")
    _run(server, sid, "and boats")
    events = _run(server, sid, "/compact")
    assert events[0][1] == {"type": "user", "text": "/compact", "model": "", "agent": ""}
    notices = [e["text"] for _, e in events if e["type"] == "notice"]
    assert any("Compacted" in text for text in notices), events
    assert events[-1][1]["type"] == "run_finished" and events[-1][1]["reason"] == "finished"
    parts = [p for m in server.json("GET", f"/api/sessions/{sid}")["messages"]
             for p in m["parts"]]
    assert any(p["type"] == "summary" and "fruit and boats" in p["text"] for p in parts)
