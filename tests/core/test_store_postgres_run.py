"""`totem run` writing its session to a real PostgreSQL (TOTEM_STORE): a kill -9 in the middle
of an answer loses nothing that was shown, and the session goes on from the database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.support.postgres import PostgresServer
from totem.store.location import open_store
from totem.testing.fake_server import FakeOpenAIServer

TOTEM = [sys.executable, "-m", "totem"]


def test_kill_9_mid_answer_loses_nothing_shown_in_postgres(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    url = postgres.new_database()
    project = tmp_path / "project"
    project.mkdir()
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), TOTEM_CONFIG=str(tmp_path / "t.yaml"),
               TOTEM_STORE=url)
    turns = [{"text": "Here is the first half of my answer", "stall": True}, {"text": "again"}]
    server = FakeOpenAIServer(turns, models=["m"])
    with server.in_thread() as base_url:
        (tmp_path / "t.yaml").write_text(
            f"model: fake/m\nproviders:\n  fake: {{kind: openai, base_url: '{base_url}'}}\n"
            "knowledge: {totaljs: never}\n")  # an empty folder would offer the docs server
        proc = subprocess.Popen(
            [*TOTEM, "run", "--format", "json", "explain"], cwd=project, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            stdin=subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        shown = ""
        for line in proc.stdout:
            event = json.loads(line)
            shown += event.get("text", "") if event["type"] == "text" else ""
            if shown == "Here is the first half of my answer":
                break
        time.sleep(0.2)  # let the 50 ms flush of streamed text happen, as it would for a user
        proc.kill()
        proc.wait(timeout=10)
        proc.stdout.close()
        store = open_store(url)
        [session] = store.list_sessions(str(project.resolve()))
        assert store.messages(session.id)[1].text() == shown
        store.close()
        resumed = subprocess.run(
            [*TOTEM, "run", "--session", session.id, "go on"], cwd=project, env=env,
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert resumed.returncode == 0 and "again" in resumed.stdout, resumed.stderr
    chats = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    assert chats[-1]["messages"][2]["content"] == shown
    assert not (tmp_path / "data" / "totem" / "totem.db").exists()  # nothing went to SQLite


def test_undo_finds_the_request_in_postgres(tmp_path: Path, postgres: PostgresServer) -> None:
    url = postgres.new_database()
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("first\n")
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), TOTEM_CONFIG=str(tmp_path / "t.yaml"),
               TOTEM_STORE=url)
    turns = [{"tool": "read", "args": {"path": "notes.txt"}},
             {"tool": "write", "args": {"path": "notes.txt", "content": "second\n"}},
             {"text": "Rewrote the notes."}]
    with FakeOpenAIServer(turns, models=["m"]).in_thread() as base_url:
        (tmp_path / "t.yaml").write_text(
            f"model: fake/m\nproviders:\n  fake: {{kind: openai, base_url: '{base_url}'}}\n"
            "knowledge: {totaljs: never}\n")
        done = subprocess.run([*TOTEM, "run", "--yes", "rewrite the notes"], cwd=project,
                              env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (project / "notes.txt").read_text() == "second\n"
    undone = subprocess.run([*TOTEM, "undo"], cwd=project, env=env, capture_output=True,
                            text=True, timeout=60)
    assert undone.returncode == 0, undone.stderr
    assert (project / "notes.txt").read_text() == "first\n"
    assert not (tmp_path / "data" / "totem" / "totem.db").exists()
