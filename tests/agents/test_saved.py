"""Saved agents in the store: one migration appended, for all projects or for one."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from totem.agents import AgentDef
from totem.agents.saved import delete_agent, get_saved_agent, save_agent, saved_agents
from totem.store.migrations import MIGRATIONS, migrate
from totem.store.sqlite import SqliteStore

PROJECT = "/work/project"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    store = SqliteStore(tmp_path / "totem.db")
    yield store.db
    store.close()


def agent(name: str, **fields: object) -> AgentDef:
    values: dict[str, object] = {"description": f"about {name}", "prompt": f"be {name}"}
    values.update(fields)
    return AgentDef(name=name, source="global", **values)  # type: ignore[arg-type]


def test_the_migration_creates_the_table(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "totem.db")
    (version,) = store.db.execute("PRAGMA user_version").fetchone()
    assert version == len(MIGRATIONS)
    columns = [row[1] for row in store.db.execute("PRAGMA table_info(agents)")]
    assert columns == [
        "scope",
        "project",
        "name",
        "description",
        "tools",
        "maxsteps",
        "model",
        "prompt",
        "updated",
    ]
    store.close()


def test_an_older_store_is_migrated_and_keeps_its_sessions(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(f"BEGIN; {MIGRATIONS[0]}; PRAGMA user_version = 1; COMMIT;")
    db.execute("INSERT INTO sessions VALUES ('s1', '/p', 't', 'm', NULL, 1.0, 1.0)")
    db.close()
    store = SqliteStore(path)
    assert store.get_session("s1") is not None
    save_agent(store.db, agent("helper"), project=None)
    assert [a.name for a in saved_agents(store.db, None)] == ["helper"]
    migrate(store.db)  # a second run changes nothing
    assert [a.name for a in saved_agents(store.db, None)] == ["helper"]
    store.close()


def test_save_get_replace_and_delete(db: sqlite3.Connection) -> None:
    full = agent("reviewer", tools=("read", "grep"), max_steps=9, model="ollama/qwen3")
    save_agent(db, full, project=PROJECT)
    got = get_saved_agent(db, "reviewer", project=PROJECT)
    assert got is not None
    assert (got.tools, got.max_steps, got.model, got.source) == (
        ("read", "grep"),
        9,
        "ollama/qwen3",
        "project",
    )
    assert got.path is None
    assert get_saved_agent(db, "reviewer", project=None) is None
    assert get_saved_agent(db, "reviewer", project="/other") is None

    save_agent(db, agent("reviewer", tools=()), project=PROJECT)
    replaced = get_saved_agent(db, "reviewer", project=PROJECT)
    assert replaced is not None and replaced.tools == () and replaced.max_steps is None

    assert not delete_agent(db, "reviewer", project=None)
    assert delete_agent(db, "reviewer", project=PROJECT)
    assert get_saved_agent(db, "reviewer", project=PROJECT) is None
    assert not delete_agent(db, "reviewer", project=PROJECT)


def test_saved_agents_lists_global_ones_then_the_projects(db: sqlite3.Connection) -> None:
    save_agent(db, agent("zeta"), project=None)
    save_agent(db, agent("alpha"), project=PROJECT)
    save_agent(db, agent("zeta", prompt="project zeta"), project=PROJECT)
    save_agent(db, agent("other"), project="/other")
    listed = saved_agents(db, PROJECT)
    assert [(a.name, a.source) for a in listed] == [
        ("zeta", "global"),
        ("alpha", "project"),
        ("zeta", "project"),
    ]
    assert listed[0].tools is None
    assert [(a.name, a.source) for a in saved_agents(db, None)] == [("zeta", "global")]
