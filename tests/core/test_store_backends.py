"""The `Store` protocol, the same on SQLite and on a real PostgreSQL: sessions, messages and
their parts, snapshots, remembered rules, the migrations; and how the store is chosen
(TOTEM_STORE, the user's `store:`, never a project's)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.ports import closed_port
from tests.support.postgres import PostgresServer
from totem.messages import (
    ImageBlock,
    Message,
    NoticePart,
    ReasoningPart,
    SummaryPart,
    TextPart,
    ToolPart,
    Usage,
)
from totem.policy.permission import Rule
from totem.settings.config import ConfigError, load_config
from totem.store.location import open_store, store_location
from totem.store.migrations import MIGRATIONS


def test_sessions_are_listed_newest_first_with_exact_times(
    new_store_location: Callable[[], str],
) -> None:
    store = open_store(new_store_location())
    first = store.create_session(project="/p", model="m1", title="one")
    time.sleep(0.01)
    child = store.create_session(project="/p", model="m2", parent_id=first.id)
    store.create_session(project="/other", model="m3")
    store.set_title(child.id, "two")
    store.add_message(Message("msg_a", first.id, "user", [TextPart("hi")]))
    listed = store.list_sessions("/p")
    assert [s.id for s in listed] == [first.id, child.id]  # a message makes it the latest
    found = store.get_session(child.id)
    assert found is not None and (found.title, found.parent_id) == ("two", first.id)
    assert found.created == child.created  # a time keeps its every digit
    assert store.get_session("ses_none") is None
    assert store.list_sessions("/p", limit=1) == listed[:1]
    store.close()


def test_messages_keep_their_order_parts_usage_and_finish(
    new_store_location: Callable[[], str],
) -> None:
    location = new_store_location()
    store = open_store(location)
    session = store.create_session(project="/p", model="m")
    question = Message("msg_1", session.id, "user", [TextPart("what is here?")])
    answer = Message("msg_2", session.id, "assistant", model="m")
    store.add_message(question)
    store.add_message(answer)
    tool = ToolPart(call_id="c1", name="read", raw_input='{"path": "a.py"}')
    for index, part in enumerate([TextPart("Let me look"), tool]):
        store.save_part(answer.id, index, part)
    tool.state, tool.output = "completed", "print('a')"
    store.save_part(answer.id, 1, tool)
    answer.finish, answer.usage = "tool_calls", Usage(input=120, output=7)
    store.finish_message(answer)
    store.close()
    again = open_store(location)
    loaded = again.messages(session.id)
    assert [m.id for m in loaded] == ["msg_1", "msg_2"]
    assert loaded[0].parts == [TextPart("what is here?")]
    assert loaded[1].parts[0] == TextPart("Let me look") and loaded[1].parts[1] == tool
    assert (loaded[1].finish, loaded[1].usage) == ("tool_calls", Usage(input=120, output=7))
    assert again.messages("ses_none") == []
    again.close()


def test_every_kind_of_part_comes_back_as_it_was_stored(
    new_store_location: Callable[[], str],
) -> None:
    store = open_store(new_store_location())
    session = store.create_session(project="/p", model="m")
    image = ImageBlock("image/png", "iVBORw0KGgo=")
    parts = [
        TextPart("look at this ☃", model_text="look (with the file)", images=[image]),
        ReasoningPart("thinking", signature="sig", redacted_data=None),
        ToolPart(call_id="call_1", name="read", input={"path": "a.py", "lines": [1, {"to": 9}]},
                 raw_input='{"path": "a.py"}', state="completed", output="é\x00ok",
                 images=[image, image], title="a.py", meta={"diff": "+x"}, started=1.5),
        NoticePart("careful", "warning"),
        SummaryPart("summary", "what happened", "msg_0"),
    ]
    store.add_message(Message("msg_1", session.id, "assistant", list(parts[:2])))
    for index, part in enumerate(parts[2:], start=2):
        store.save_part("msg_1", index, part)
    [stored] = store.messages(session.id)
    assert stored.parts == parts
    store.close()


def test_snapshots_and_remembered_rules(new_store_location: Callable[[], str]) -> None:
    store = open_store(new_store_location())
    store.save_snapshot(session_id="s1", call_id="c1", path="a.py", content=b"\x00old\xff")
    store.save_snapshot(session_id="s1", call_id="c2", path="new.py", content=None)
    store.save_snapshot(session_id="s2", call_id="c3", path="b.py", content=b"x")
    assert store.snapshots("s1") == [("c1", "a.py", b"\x00old\xff"), ("c2", "new.py", None)]
    store.remember_rule("/p", Rule("bash", "git status *", "allow"))
    store.remember_rule("/p", Rule("bash", "git status *", "deny"))  # the later reply wins
    store.remember_rule("/q", Rule("edit", "*", "allow"))
    assert store.remembered_rules("/p") == [Rule("bash", "git status *", "deny")]
    store.close()


def test_postgres_runs_every_migration_once(postgres: PostgresServer) -> None:
    import psycopg

    url = postgres.new_database()
    open_store(url).close()
    open_store(url).close()  # a second open migrates nothing
    with psycopg.connect(url) as db:
        assert db.execute("SELECT version FROM totem_schema").fetchall() == [(len(MIGRATIONS),)]
        types = dict(db.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'snapshots'").fetchall())
    assert types["content"] == "bytea" and types["created"] == "double precision"
    assert types["id"] == "bigint"


def test_totem_store_chooses_postgres(
    postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("TOTEM_CONFIG", raising=False)
    url = postgres.new_database()
    monkeypatch.setenv("TOTEM_STORE", url)
    assert store_location() == url
    store = open_store()
    assert type(store).__name__ == "PostgresStore"
    store.close()


def test_the_store_is_the_users_choice_never_the_projects(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("TOTEM_STORE", raising=False)
    monkeypatch.delenv("TOTEM_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("STORE_PASSWORD", "s3cret")
    project = tmp_path / "project"
    (project / ".totem").mkdir(parents=True)
    (project / ".totem" / "config.yaml").write_text("store: postgresql://evil@10.0.0.1/x\n")
    monkeypatch.chdir(project)
    assert store_location() == str(tmp_path / "data" / "totem" / "totem.db")
    config = load_config(project, trusted=True)
    assert any(item.startswith("store:") for item in config.refused)
    (tmp_path / "config" / "totem").mkdir(parents=True)
    (tmp_path / "config" / "totem" / "config.yaml").write_text(
        "store: postgresql://me:${env:STORE_PASSWORD}@db.internal/totem\n")
    assert store_location() == "postgresql://me:s3cret@db.internal/totem"


def test_a_password_in_clear_is_not_copied_to_the_config_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("TOTEM_CONFIG", raising=False)
    (tmp_path / "config" / "totem").mkdir(parents=True)
    (tmp_path / "config" / "totem" / "config.yaml").write_text(
        "store: postgresql://me:pw-in-clear@db/totem\n")
    load_config(tmp_path, trusted=True)
    assert store_location() == "postgresql://me:pw-in-clear@db/totem"
    cached = list((tmp_path / "cache").rglob("*.json"))
    assert not any("pw-in-clear" in path.read_text() for path in cached)


def test_an_unreachable_database_is_a_clear_error_without_the_password() -> None:
    url = f"postgresql://me:pw-secret@127.0.0.1:{closed_port()}/totem"
    with pytest.raises(ConfigError) as caught:
        open_store(url)
    message = str(caught.value)
    assert "cannot be reached" in message and "127.0.0.1" in message
    assert "pw-secret" not in message
    with pytest.raises(ConfigError, match="mysql://"):
        open_store("mysql://me@db/totem")


def test_postgres_store_connects_again_when_its_connection_is_cut(
    postgres: PostgresServer,
) -> None:
    import psycopg

    from totem.store.postgres import PostgresStore

    store = open_store(postgres.new_database())
    assert isinstance(store, PostgresStore)
    session = store.create_session(project="/p", model="m")
    message = Message("msg_1", session.id, "assistant")
    store.add_message(message)
    store.save_part(message.id, 0, TextPart("before"))
    backend = store.db.info.backend_pid
    with psycopg.connect(postgres.url(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (backend,))
    store.save_part(message.id, 0, TextPart("before and after"))  # a run goes on
    assert store.db.info.backend_pid != backend
    assert store.messages(session.id)[0].parts == [TextPart("before and after")]
    store.close()


def test_checkpoints_and_snapshots_after_a_mark(new_store_location: Callable[[], str]) -> None:
    store = open_store(new_store_location())
    session = store.create_session(project="/p", model="m")
    store.save_snapshot(session_id=session.id, call_id="c0", path="old.py", content=b"0")
    mark = store.snapshot_mark()
    child = store.create_session(project="/p", model="m", parent_id=session.id)
    store.save_snapshot(session_id=session.id, call_id="c1", path="a.py", content=b"\x00a")
    store.save_snapshot(session_id=child.id, call_id="c2", path="b.py", content=None)
    store.save_snapshot(session_id="ses_other", call_id="c3", path="c.py", content=b"c")
    assert store.snapshots_after(session.id, mark) == [("a.py", b"\x00a"), ("b.py", None)]
    assert store.snapshot_mark() > mark
    store.add_checkpoints(session.id, "msg_1", [("a.py", b"\x00a", b"new"), ("n.py", None, b"")])
    store.set_checkpoint_state("msg_1", "undone")
    found = store.checkpoints(session.id)
    assert [(c.path, c.before, c.after, c.state) for c in found] == [
        ("a.py", b"\x00a", b"new", "undone"), ("n.py", None, b"", "undone")]
    assert found[0].undone is not None and found[0].id < found[1].id
    store.set_checkpoint_state("msg_1", "done")
    assert all(c.undone is None for c in store.checkpoints(session.id))
    store.close()


def test_the_threads_of_sub_agents_are_left_out_of_the_page_list_on_both_backends(
    new_store_location: Callable[[], str],
) -> None:
    from totem.server.sessions import session_list, thread_ids

    store = open_store(new_store_location())
    parent = store.create_session(project="/p", model="m")
    thread = store.create_session(project="/p", model="m", parent_id=parent.id)
    fork = store.create_session(project="/p", model="m", parent_id=parent.id)  # no task names it
    call = ToolPart("call_1", "task", {"prompt": "look"}, state="completed",
                    meta={"session_id": thread.id, "agent": "explore"})
    store.add_message(Message("msg_t", parent.id, "assistant", [call]))
    assert thread_ids(store, "/p") == {thread.id}
    assert {s["id"] for s in session_list(store, "/p")} == {parent.id, fork.id}
    store.close()
