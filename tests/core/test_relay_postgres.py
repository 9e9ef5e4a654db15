"""Two workers on one real PostgreSQL: worker A runs a session; worker B (another process)
follows its events through the relay, drops the stream half way and resumes it from the last
event id (as a page does with Last-Event-ID), and answers the run's questions (the ask tool's,
then a permission); the run on A goes on with those answers."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.postgres import PostgresServer
from totem.policy.permission import Reply
from totem.session.relayed_run import permission_reply
from totem.store.location import open_store
from totem.store.pg_relay import PgRelay
from totem.testing.fake_server import FakeOpenAIServer

SRC = str(Path(__file__).resolve().parents[2] / "src")

# Worker A: open a session, say its id, run the request through the relay, say how it ended.
WORKER = """
import asyncio, sys
from pathlib import Path
from totem.abort import AbortSignal
from totem.session.relayed_run import run_relayed
from totem.session.service import SessionService
from totem.store.pg_relay import PgRelay

async def main() -> None:
    relay = PgRelay(sys.argv[1])
    await relay.setup()
    service = SessionService(Path(sys.argv[2]), mode="interactive")
    session = service.open()
    print(session.id, flush=True)
    sys.stdin.readline()  # the follower is there
    finished = await run_relayed(service, session, "write the file", relay=relay,
                                 abort=AbortSignal())
    await service.aclose()
    print(finished.reason if finished else "none", flush=True)

asyncio.run(main())
"""


async def follow(relay: PgRelay, session_id: str, *, after: int,
                 stop_after: int | None) -> list[tuple[int, dict[str, Any]]]:
    """Read the stream from `after`; answer a permission question once; stop at the run's
    end or after `stop_after` events (a page that goes away)."""
    seen: list[tuple[int, dict[str, Any]]] = []
    # closed here, not left to the loop's shutdown (which may cancel the closing and leave
    # the database connection open)
    async with contextlib.aclosing(relay.follow(session_id, after=after)) as events:
        async for event_id, event in events:
            seen.append((event_id, event))
            if event["type"] == "permission":
                assert event["permission"] == "bash", event  # nothing else may be allowed
                await relay.answer(event["request_id"], {"kind": "once"})
            elif event["type"] == "question":
                await relay.answer(event["request_id"], {"answer": "relayed"})
            if event["type"] == "run_finished" or len(seen) == stop_after:
                break
    return seen


def test_a_run_on_one_worker_is_followed_and_answered_from_another(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    url = postgres.new_database()
    project = tmp_path / "project"
    project.mkdir()
    turns = [{"tool": "ask", "args": {"question": "Which word?", "options": ["relayed", "x"]}},
             {"tool": "bash", "args": {"command": "echo relayed > out.txt"}},
             {"text": "Wrote out.txt."}]
    server = FakeOpenAIServer(turns, models=["m"])
    with server.in_thread() as base_url:
        (tmp_path / "t.yaml").write_text(
            f"model: fake/m\nproviders:\n  fake: {{kind: openai, base_url: '{base_url}'}}\n"
            "knowledge: {totaljs: never}\n"  # an empty folder would offer the docs server
            "sandbox: off\n")  # the relayed bash question is the subject: asked outside it
        env = dict(os.environ, PYTHONPATH=SRC, TOTEM_STORE=url,
                   TOTEM_CONFIG=str(tmp_path / "t.yaml"), XDG_DATA_HOME=str(tmp_path / "data"),
                   XDG_CONFIG_HOME=str(tmp_path / "c"))
        worker = subprocess.Popen([sys.executable, "-c", WORKER, url, str(project)], env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert worker.stdin is not None and worker.stdout is not None
        session_id = worker.stdout.readline().strip()
        relay = PgRelay(url)
        worker.stdin.write("go\n")
        worker.stdin.flush()
        first = asyncio.run(follow(relay, session_id, after=0, stop_after=2))
        rest = asyncio.run(follow(relay, session_id, after=first[-1][0], stop_after=None))
        reason = worker.stdout.readline().strip()
        worker.stdin.close()
        worker.stdout.close()
        assert worker.wait(timeout=60) == 0
    assert reason == "finished"
    ids = [event_id for event_id, _ in first + rest]
    assert ids == sorted(set(ids))  # in order, nothing twice
    assert ids == [event_id for event_id, _ in asyncio.run(relay.events(session_id))]  # nor lost
    types = [event["type"] for _, event in first + rest]
    assert types[0] == "run_started" and types[-1] == "run_finished" and "permission" in types
    assert (project / "out.txt").read_text() == "relayed\n"
    chats = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    asked = chats[1]["messages"][-1]  # the ask tool's result, as the model got it
    assert asked["role"] == "tool" and "relayed" in asked["content"]
    store = open_store(url)
    assert store.messages(session_id)[-1].text() == "Wrote out.txt."
    store.close()


def test_a_relayed_permission_reply_is_never_a_silent_allow() -> None:
    assert permission_reply({"kind": "once"}) == Reply("once")
    assert permission_reply({"kind": "always"}).kind == "always"
    assert permission_reply({"kind": "allow-everything"}) == Reply("reject", "rejected")
    assert permission_reply({}).kind == "reject"


def test_a_stop_asked_on_another_worker_ends_the_run(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    url = postgres.new_database()
    project = tmp_path / "project"
    project.mkdir()
    server = FakeOpenAIServer([{"text": "Thinking about it", "stall": True}], models=["m"])
    with server.in_thread() as base_url:
        (tmp_path / "t.yaml").write_text(
            f"model: fake/m\nproviders:\n  fake: {{kind: openai, base_url: '{base_url}'}}\n"
            "knowledge: {totaljs: never}\n")  # an empty folder would offer the docs server
        env = dict(os.environ, PYTHONPATH=SRC, TOTEM_STORE=url,
                   TOTEM_CONFIG=str(tmp_path / "t.yaml"), XDG_DATA_HOME=str(tmp_path / "data"),
                   XDG_CONFIG_HOME=str(tmp_path / "c"))
        worker = subprocess.Popen([sys.executable, "-c", WORKER, url, str(project)], env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert worker.stdin is not None and worker.stdout is not None
        session_id = worker.stdout.readline().strip()
        relay = PgRelay(url)
        worker.stdin.write("go\n")
        worker.stdin.flush()

        async def stop_when_text_shows() -> list[str]:
            seen = []
            async with contextlib.aclosing(relay.follow(session_id)) as events:
                async for _, event in events:
                    seen.append(event["type"])
                    if event["type"] == "text":
                        await relay.request_abort(session_id)
                    if event["type"] == "run_finished":
                        seen.append(event["reason"])
                        break
            return seen

        seen = asyncio.run(stop_when_text_shows())
        reason = worker.stdout.readline().strip()
        worker.stdin.close()
        worker.stdout.close()
        assert worker.wait(timeout=60) == 0
    assert reason == "aborted" and seen[-2:] == ["run_finished", "aborted"]
    assert asyncio.run(relay.prune(older_than=-1)) >= len(seen) - 1  # all of them are old now
    assert asyncio.run(relay.events(session_id)) == []


def test_publishing_goes_on_after_its_connection_is_lost(postgres: PostgresServer) -> None:
    import psycopg
    import pytest

    url = postgres.new_database()

    async def main() -> list[str]:
        relay = PgRelay(url)
        await relay.setup()
        first = await relay.publish("ses_a", {"type": "text", "text": "one"})
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as admin:
            await admin.execute(  # what a database restart or a proxy's cut does to it
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE pid <> pg_backend_pid() AND datname = current_database()")
        with pytest.raises(psycopg.OperationalError):
            await relay.publish("ses_a", {"type": "text", "text": "lost"})
        second = await relay.publish("ses_a", {"type": "text", "text": "two"})
        assert second > first
        found = [event["text"] for _, event in await relay.events("ses_a")]
        await relay.aclose()
        return found

    assert asyncio.run(main()) == ["one", "two"]
