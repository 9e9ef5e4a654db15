"""The API under the page, with plain HTTP: runs and their event stream (resumed without loss
or duplicate), snapshots mid-run, questions, abort, fork, export, agents and providers."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.ports import closed_port
from tests.support.processes import no_process
from tests.support.sandbox import require_bwrap
from tests.support.web_serve import Served, finished, openai_config, project, scripted
from totem.sandbox.backend import available
from totem.testing.fake_server import FakeOpenAIServer

ALLOW_BASH = "permission:\n  - {permission: bash, pattern: '*', action: allow}\n"
SECRET = "sk-supersecret-0123456789abcdef"
TURNS: list[dict[str, Any]] = [
    {"tool": "bash", "args": {"command": "sleep 1.2; echo STEP-ONE"}},
    {"tool": "todo", "args": {"todos": [{"content": "look", "status": "done"},
                                        {"content": "answer", "status": "in_progress"}]}},
    {"reasoning": "Both steps are done.", "text": "All **done**."},
    {"tool": "bash", "args": {"command": "sleep 30.25"}},
    {"text": "(never said)"},
    # asked with the sandbox on as well: the model asks to run it outside (a question that no
    # rule here answers); where bwrap cannot run, the ordinary bash question of `rm *`
    {"tool": "bash", "args": {"command": "rm -rf build", "sandbox": False,
                              "reason": "build/ is root's"}},
    {"text": "asked"},
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("api")
    config = scripted(tmp, TURNS, extra=ALLOW_BASH + "  - {permission: bash, pattern: 'rm *', "
                      "action: ask}\n")
    with Served(project(tmp, config), env_extra={"MY_API_TOKEN": SECRET}) as served:
        yield served


def _types(events: list[tuple[int | None, dict[str, Any]]]) -> list[str]:
    return [e["type"] for _, e in events]


def _wait_finished(server: Served, sid: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        snap: dict[str, Any] = server.json("GET", f"/api/sessions/{sid}")
        if snap["live"] is None:
            return snap
        time.sleep(0.05)
    raise AssertionError("the run did not finish")


def test_a_run_streams_and_a_cut_stream_resumes_without_loss_or_duplicate(server: Served) -> None:
    sid = server.new_session()
    start = server.json("POST", f"/api/sessions/{sid}/runs", {"text": f"go {SECRET}"})
    after = start["after"]
    first = server.events(sid, after=after,
                          stop=lambda ev: any(e["type"] == "tool_start" for _, e in ev))
    # mid-run: a snapshot has the stored history before the run, and where the run starts
    snap = server.json("GET", f"/api/sessions/{sid}")
    assert snap["live"] == {"after": after, "model": ""}
    assert snap["messages"] == [] and snap["after"] == after
    last_id = first[-1][0]
    assert last_id is not None
    rest = server.events(sid, last_event_id=last_id, stop=finished)
    ids = [i for i, _ in first + rest]
    assert ids == list(range(after + 1, after + 1 + len(ids)))  # no loss, no duplicate
    types = _types(first + rest)
    assert types[:2] == ["user", "run_started"] and "reasoning" in types
    assert types.count("tool_start") == 2 and "todo" in types and types[-1] == "run_finished"
    text = "".join(e["text"] for _, e in first + rest if e["type"] == "text")
    assert text == "All **done**."
    # the whole run again, from its start, as a reloaded page asks for it
    again = server.events(sid, after=after, stop=finished)
    assert again == first + rest
    snap = _wait_finished(server, sid)
    assert [m["role"] for m in snap["messages"]][0] == "user" and snap["after"] == ids[-1]
    assert snap["usage"]["input"] > 0


def test_a_stream_that_cannot_resume_is_told_to_reload(server: Served) -> None:
    sid = server.new_session()
    events = server.events(sid, last_event_id=10_000, stop=lambda ev: len(ev) >= 1)
    assert events[0][1] == {"type": "resync"}


def test_abort_stops_a_running_command(server: Served) -> None:
    sid = server.new_session()
    server.json("POST", f"/api/sessions/{sid}/runs", {"text": "skip ahead"})
    # this session's provider starts at the first turn: play it through
    server.events(sid, after=0, stop=finished)
    server.json("POST", f"/api/sessions/{sid}/runs", {"text": "sleep now"})
    server.events(sid, after=0, stop=lambda ev: sum(e["type"] == "tool_start" for _, e in ev) >= 3)
    status, _, _ = server.request("POST", f"/api/sessions/{sid}/runs", {"text": "again"})
    assert status == 409  # one run at a time in a session
    assert server.json("POST", f"/api/sessions/{sid}/abort", {})["aborted"] is True
    events = server.events(sid, after=0, stop=lambda ev: _types(ev).count("run_finished") >= 2)
    ends = [e for _, e in events if e["type"] == "tool_end"]
    assert "[Aborted by user]" in ends[-1]["output"]
    assert events[-1][1]["reason"] == "aborted"
    deadline = time.monotonic() + 10
    while not no_process("sleep 30.25") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert no_process("sleep 30.25")


def test_a_permission_question_waits_for_the_reply(server: Served) -> None:
    sid = server.new_session()
    _play(server, sid, "one")  # turns 0-2 of this session's script
    run = server.json("POST", f"/api/sessions/{sid}/runs", {"text": "two"})  # turn 3: sleep
    server.events(sid, after=run["after"], stop=lambda ev: "tool_start" in _types(ev))
    server.json("POST", f"/api/sessions/{sid}/abort", {})
    _wait_finished(server, sid)
    _play(server, sid, "three")  # turn 4
    run = server.json("POST", f"/api/sessions/{sid}/runs", {"text": "clean up"})  # turn 5
    asked = server.events(sid, after=run["after"], stop=lambda ev: "permission" in _types(ev))
    question = asked[-1][1]
    assert question["tool"] == "bash" and question["patterns"] == ["rm -rf build"]
    if available().works:
        assert question["permission"] == "unsandboxed"
        assert "OUTSIDE the sandbox (reason: build/ is root's)" in question["title"]
    else:
        assert question["permission"] == "bash"
    status, _, _ = server.request("POST", f"/api/sessions/{sid}/reply",
                                  {"request_id": "perm_nope", "reply": "once"})
    assert status == 409
    reply = {"request_id": question["request_id"], "reply": "reject", "message": "not now"}
    assert server.json("POST", f"/api/sessions/{sid}/reply", reply)["ok"] is True
    events = server.events(sid, after=asked[-1][0], stop=finished)
    assert events[0][1] == {"type": "answered", "request_id": question["request_id"],
                            "answer": "Rejected: not now"}
    end = next(e for _, e in events if e["type"] == "tool_end")
    assert end["is_error"] and "not now" in end["output"]



def test_in_the_sandbox_a_command_runs_without_a_question_and_stays_inside(
    tmp_path: Path,
) -> None:
    """No rule allows bash here: with the sandbox on (the default) the command runs with no
    question, writes in the project, and its write outside fails."""
    require_bwrap()
    turns = [{"tool": "bash", "args": {"command": "echo IN > in.txt; echo OUT > ../out.txt"}},
             {"text": "ran"}]
    with Served(project(tmp_path, scripted(tmp_path, turns))) as served:
        sid = served.new_session()
        run = served.json("POST", f"/api/sessions/{sid}/runs", {"text": "go"})
        events = served.events(sid, after=run["after"], stop=finished)
    assert "permission" not in _types(events)
    end = next(e for _, e in events if e["type"] == "tool_end")
    assert "Read-only file system" in end["output"], end
    assert (served.root / "in.txt").read_text() == "IN\n"
    assert not (tmp_path / "out.txt").exists()

def _play(server: Served, sid: str, text: str) -> dict[str, Any]:
    server.json("POST", f"/api/sessions/{sid}/runs", {"text": text})
    return _wait_finished(server, sid)


def test_fork_copies_the_history_up_to_a_message(server: Served) -> None:
    sid = server.new_session()
    server.json("POST", f"/api/sessions/{sid}/runs", {"text": "first"})
    snap = _wait_finished(server, sid)
    messages = snap["messages"]
    assert len(messages) >= 4
    until = messages[1]["id"]
    fork = server.json("POST", f"/api/sessions/{sid}/fork", {"message_id": until})["session"]
    assert fork["parent_id"] == sid and fork["id"] != sid
    copied = server.json("GET", f"/api/sessions/{fork['id']}")["messages"]
    assert [m["parts"] for m in copied] == [m["parts"] for m in messages[:2]]
    assert {m["id"] for m in copied}.isdisjoint(m["id"] for m in messages)
    whole = server.json("POST", f"/api/sessions/{sid}/fork", {})["session"]
    assert len(server.json("GET", f"/api/sessions/{whole['id']}")["messages"]) == len(messages)
    listed = [s["id"] for s in server.json("GET", "/api/sessions")["sessions"]]
    assert fork["id"] in listed and whole["id"] in listed
    status, _, _ = server.request("POST", f"/api/sessions/{sid}/fork", {"message_id": "msg_x"})
    assert status == 404


def test_export_holds_the_messages_and_no_secret(server: Served) -> None:
    sid = server.new_session()
    server.json("POST", f"/api/sessions/{sid}/runs", {"text": f"my key is {SECRET}"})
    _wait_finished(server, sid)
    status, headers, raw = server.request("GET", f"/api/sessions/{sid}/export")
    assert status == 200 and "attachment" in headers["content-disposition"]
    assert SECRET.encode() not in raw
    data = json.loads(raw)
    assert data["format"] == "totem-session/1" and data["session"]["id"] == sid
    assert data["messages"][0]["parts"][0]["text"] == "my key is [redacted]"
    assert any(p["type"] == "tool" for m in data["messages"] for p in m["parts"])


def test_an_unknown_session_or_a_bad_body_is_refused(server: Served) -> None:
    assert server.request("GET", "/api/sessions/ses_nope")[0] == 404
    sid = server.new_session()
    status, _, _ = server.request("POST", f"/api/sessions/{sid}/runs", {"text": "  "})
    assert status == 400
    status, _, _ = server.request("POST", f"/api/sessions/{sid}/reply",
                                  {"request_id": "x", "reply": "maybe"})
    assert status == 400
    assert server.request("DELETE", "/api/sessions")[0] == 405


def test_saved_agents_are_created_edited_and_deleted(server: Served) -> None:
    agents = server.json("GET", "/api/agents")
    assert {"explore", "general"} <= {a["name"] for a in agents["agents"] if a["source"] ==
                                      "builtin"}
    assert "bash" in agents["tools"]
    body = {"name": "checker", "description": "Checks", "scope": "project", "tools": ["read"],
            "maxsteps": 5, "model": None, "prompt": "You check."}
    server.json("POST", "/api/agents", body)
    moved = {**body, "scope": "global", "previous": {"name": "checker", "scope": "project"}}
    server.json("POST", "/api/agents", moved)
    saved = [a for a in server.json("GET", "/api/agents")["agents"] if a["name"] == "checker"]
    assert [(a["source"], a["tools"], a["maxsteps"]) for a in saved] == [("global", ["read"], 5)]
    assert "checker" in {a["name"] for a in server.json("GET", "/api/info")["agents"]}
    status, _, raw = server.request("POST", "/api/agents", {**body, "name": "bad name!"})
    assert status == 400 and b"not valid" in raw
    assert server.request("DELETE", "/api/agents/global/checker")[0] == 200
    assert server.request("DELETE", "/api/agents/global/checker")[0] == 404


def test_a_provider_added_with_a_key_keeps_the_key_out_of_config_and_answers(
    server: Served,
) -> None:
    with FakeOpenAIServer([], models=["listed-model"]).in_thread() as url:
        added = server.json("POST", "/api/settings/providers",
                            {"template": "other", "name": "mine", "url": url, "key": SECRET})
        assert "mine" in added["message"] and SECRET not in added["message"]
        config = (server.home / "config" / "totem" / "config.yaml").read_text()
        assert SECRET not in config and "${key:mine}" in config
        view = server.json("GET", "/api/settings/providers")
        assert SECRET.encode() not in json.dumps(view).encode()
        assert any(p["name"] == "mine" and p["key"] == "stored" for p in view["providers"])
        tested = server.json("POST", "/api/settings/providers/mine/test", {})
        assert tested["ok"] and "listed-model" in tested["message"]
        models = server.json("GET", "/api/models")
        group = next(g for g in models["providers"] if g["provider"] == "mine")
        assert [m["id"] for m in group["models"]] == ["listed-model"]
        assert group["models"][0]["context_window"] is None  # unknown stays unknown
    status, _, raw = server.request("POST", "/api/settings/providers",
                                    {"template": "other", "name": "mine", "url": url})
    assert status == 400 and b"exists" in raw
    assert server.json("DELETE", "/api/settings/providers/mine")["ok"]
    assert "mine" not in server.json("GET", "/api/settings/providers")["providers"]


def test_the_page_and_its_files_are_served(server: Served, tmp_path: Path) -> None:
    status, headers, body = server.request("GET", "/")
    assert status == 200 and b'src="/static/app.js"' in body
    for name in ["app.js", "chat.js", "turn.js", "markdown.js", "panels.js", "util.js",
                 "style.css", "icon.svg"]:
        status, headers, body = server.request("GET", f"/static/{name}")
        assert status == 200 and body, name
        tag = headers["etag"]
        assert server.request("GET", f"/static/{name}", headers={"If-None-Match": tag})[0] == 304


def test_a_run_that_cannot_start_says_why(tmp_path: Path) -> None:
    with Served(project(tmp_path, "maxsteps: 5\n")) as server:  # no provider at all
        sid = server.new_session()
        run = server.json("POST", f"/api/sessions/{sid}/runs", {"text": "hello"})
        events = server.events(sid, after=run["after"], stop=finished)
        notice = next(e for _, e in events if e["type"] == "notice")
        assert notice["level"] == "error" and "provider" in notice["text"].lower()
        assert events[-1][1]["reason"] == "error"
        server.json("POST", f"/api/sessions/{sid}/runs", {"text": "again"})  # not stuck


def test_a_local_server_that_is_not_there_is_said_plainly_on_the_page(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    with Served(project(tmp_path, openai_config(url))) as server:
        sid = server.new_session()
        run = server.json("POST", f"/api/sessions/{sid}/runs", {"text": "hello"})
        events = server.events(sid, after=run["after"], stop=finished)
    retries = [e for _, e in events if e["type"] == "notice" and "retrying" in e["text"]]
    assert len(retries) == 2
    end = events[-1][1]
    assert end["reason"] == "error"
    assert f"nothing answers at {url} — start your model server" in end["detail"]
