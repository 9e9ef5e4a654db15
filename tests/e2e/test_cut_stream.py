"""A stream cut after the first words: `totem run` asks again and says so honestly.

Two real servers cut the answer: aimock's interruption (`truncateAfterChunks`: the socket
is dropped after a few chunks of a chunked event stream, `latency` between chunks so that
they leave before the cut) and a small hand-made one (a partial
SSE stream, then the connection closed, no finish reason and no `[DONE]`). Each time the run
ends well (exit 0) with the second answer; the JSON events show the notice between the cut
words and the new answer; the store keeps the cut answer, marked interrupted; and no
request sent to the model afterwards holds the cut words as if they had been said.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.aimock import Aimock, aimock_fixture
from tests.support.local_http import Recorded, Reply, scripted_server, sse
from totem.messages import Message, NoticePart, TextPart
from totem.store.sqlite import SqliteStore

STORY = "Once upon a time there was a small robot who wanted to see the sea. " * 3
RETOLD = "Once upon a time, told again and in full."

FIXTURES = [
    {"match": {"userMessage": "tell a story", "sequenceIndex": 0},
     "response": {"content": STORY}, "chunkSize": 10, "latency": 20, "truncateAfterChunks": 4},
    {"match": {"userMessage": "tell a story", "sequenceIndex": 1},
     "response": {"content": RETOLD}},
    {"match": {}, "response": {"content": "catch-all"}},
]

aimock = aimock_fixture(FIXTURES)


class Project:
    """A project folder, its config pointing at `url`, and its own data folder."""

    def __init__(self, tmp: Path, url: str) -> None:
        self.root = tmp / "project"
        self.root.mkdir()
        config = tmp / "totem.yaml"
        config.write_text(
            f"model: cut/totem-test\nproviders:\n  cut: {{kind: openai, base_url: '{url}'}}\n"
        )
        self.data = tmp / "data"
        self.env = dict(os.environ, TOTEM_CONFIG=str(config), XDG_DATA_HOME=str(self.data),
                        XDG_CONFIG_HOME=str(tmp / "cfg"))

    def run(self, *args: str) -> list[dict[str, Any]]:
        done = subprocess.run(
            [sys.executable, "-m", "totem", "run", "--format", "json", *args], cwd=self.root,
            env=self.env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return [json.loads(line) for line in done.stdout.splitlines()]

    def messages(self) -> list[Message]:
        store = SqliteStore(self.data / "totem" / "totem.db")
        try:
            session = store.list_sessions(str(self.root.resolve()))[0]
            return store.messages(session.id)
        finally:
            store.close()


def check_restarted_run(events: list[dict[str, Any]], *, answer: str) -> str:
    """The cut words, the notice, then exactly the new answer; the cut words returned."""
    kinds = [e["type"] for e in events]
    notice = next(i for i, e in enumerate(events) if e["type"] == "notice"
                  and "connection lost mid-answer; retrying" in e["text"].lower())
    before = "".join(e["text"] for e in events[:notice] if e["type"] == "text")
    after = "".join(e["text"] for e in events[notice:] if e["type"] == "text")
    assert before and after == answer
    assert kinds[-2:] == ["run_finished", "result"] and events[-2]["reason"] == "finished"
    return before


def check_stored(messages: list[Message], *, cut: str, answer: str) -> None:
    """The user's message, the cut answer kept and marked, then the whole answer."""
    user, interrupted, final = messages
    assert user.role == "user"
    assert interrupted.interrupted and interrupted.text() == cut
    assert [type(p) for p in interrupted.parts] == [TextPart, NoticePart]
    assert "Connection lost mid-answer" in interrupted.parts[-1].text  # type: ignore[union-attr]
    assert not final.interrupted and final.text() == answer and final.finish == "stop"


def said_by_assistant(request: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in request["messages"] if m["role"] == "assistant"]


@pytest.mark.aimock
def test_aimock_truncated_stream_is_asked_again(aimock: Aimock, tmp_path: Path) -> None:
    project = Project(tmp_path, aimock.url)
    aimock.clear_journal()
    cut = check_restarted_run(project.run("tell a story"), answer=RETOLD)
    assert STORY.startswith(cut) and cut != STORY
    check_stored(project.messages(), cut=cut, answer=RETOLD)
    project.run("--continue", "and then?")
    chats = [e["body"] for e in aimock.journal() if e["path"].endswith("/chat/completions")]
    assert len(chats) == 3
    assert said_by_assistant(chats[2]) == [RETOLD]  # the cut words were never "said"


FIRST_HALF = ["The first half ", "of an answer"]


def chunk(text: str, finish: str | None = None) -> dict[str, Any]:
    delta = {"content": text} if text else {}
    return {"id": "c1", "object": "chat.completion.chunk", "model": "totem-test",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_a_server_that_closes_mid_answer_is_asked_again(tmp_path: Path) -> None:
    answers = iter([
        # a partial event stream, then the connection closes: no finish reason, no [DONE]
        sse([chunk(text) for text in FIRST_HALF]),
        Reply(200, [*sse([chunk("A whole "), chunk("answer.", "stop")]).body,  # type: ignore[misc]
                    b"data: [DONE]\r\n\r\n"], {"Content-Type": "text/event-stream"}),
        Reply(200, [*sse([chunk("Later.", "stop")]).body,  # type: ignore[misc]
                    b"data: [DONE]\r\n\r\n"], {"Content-Type": "text/event-stream"}),
    ])

    def chat(_: Recorded) -> Reply:
        return next(answers)

    with scripted_server({("POST", "/v1/chat/completions"): chat}) as server:
        project = Project(tmp_path, f"{server.url}/v1")
        cut = check_restarted_run(project.run("answer me"), answer="A whole answer.")
        assert cut == "".join(FIRST_HALF)
        check_stored(project.messages(), cut=cut, answer="A whole answer.")
        project.run("--continue", "and then?")
        chats = [r.json() for r in server.requests if r.method == "POST"]  # local: also probed
    assert len(chats) == 3
    assert said_by_assistant(chats[2]) == ["A whole answer."]
