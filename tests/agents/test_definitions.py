"""Agent definitions: built in, saved (global, project), project files; the last one wins."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.project_files import write_file
from totem.agents import AgentDef, load_agents, parse_agent, project_key, to_markdown
from totem.agents.definitions import (
    AgentError,
    FrontMatterError,
    parse_tools,
    split_front_matter,
)
from totem.agents.saved import save_agent
from totem.store.sqlite import SqliteStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    store = SqliteStore(tmp_path / "totem.db")
    yield store
    store.close()


def write_agent(root: Path, filename: str, text: str) -> Path:
    return write_file(root / ".totem" / "agents" / filename, text)


def saved(name: str, prompt: str, source: str = "global") -> AgentDef:
    assert source in ("global", "project")
    return AgentDef(
        name=name,
        description=f"{name} from {source}",
        prompt=prompt,
        source="global" if source == "global" else "project",
    )


def test_builtin_agents_explore_is_read_only_and_general_has_every_tool(root: Path) -> None:
    agents = load_agents(root)
    explore, general = agents["explore"], agents["general"]
    assert explore.source == general.source == "builtin"
    assert explore.tools == ("read", "glob", "grep")
    assert not explore.allows("write") and not explore.allows("bash")
    assert "never change" in explore.prompt
    assert general.tools is None and general.allows("bash")
    assert explore.description and general.description
    assert explore.path is not None and explore.path.endswith("explore.md")


def test_the_last_place_wins(root: Path, store: SqliteStore) -> None:
    assert load_agents(root, store)["explore"].source == "builtin"

    save_agent(store.db, saved("explore", "global prompt"), project=None)
    assert load_agents(root, store)["explore"].prompt == "global prompt"

    save_agent(store.db, saved("explore", "project prompt", "project"), project=project_key(root))
    found = load_agents(root, store)["explore"]
    assert (found.source, found.prompt) == ("project", "project prompt")

    path = write_agent(
        root, "explore.md", "---\ndescription: the file's explore\n---\nfile prompt\n"
    )
    found = load_agents(root, store)["explore"]
    assert (found.source, found.prompt, found.path) == ("file", "file prompt", str(path))
    assert load_agents(root, store)["general"].source == "builtin"


def test_agents_saved_for_another_project_do_not_apply(
    root: Path, store: SqliteStore, tmp_path: Path
) -> None:
    save_agent(store.db, saved("reviewer", "x", "project"), project=str(tmp_path / "elsewhere"))
    save_agent(store.db, saved("helper", "y"), project=None)
    agents = load_agents(root, store)
    assert "reviewer" not in agents
    assert agents["helper"].source == "global"


def test_a_connection_works_as_the_store(root: Path, store: SqliteStore) -> None:
    save_agent(store.db, saved("helper", "y"), project=None)
    assert "helper" in load_agents(root, store.db)
    assert "helper" not in load_agents(root, None)


def test_a_file_agent_with_every_field(root: Path) -> None:
    write_agent(
        root,
        "reviewer.md",
        "---\n"
        "name: reviewer\n"
        "description: Reviews a change\n"
        "tools: [read, glob, grep]\n"
        "maxsteps: 20\n"
        "model: ollama/qwen3:8b\n"
        "---\n"
        "You review code.\n\nBe brief.\n",
    )
    agent = load_agents(root)["reviewer"]
    assert agent == AgentDef(
        name="reviewer",
        description="Reviews a change",
        tools=("read", "glob", "grep"),
        max_steps=20,
        model="ollama/qwen3:8b",
        prompt="You review code.\n\nBe brief.",
        source="file",
        path=str(root / ".totem" / "agents" / "reviewer.md"),
    )


def test_name_defaults_to_the_file_and_tools_may_be_text(root: Path) -> None:
    write_agent(
        root,
        "tester.md",
        "---\ndescription: runs tests\ntools: read, bash\nmax_steps: 3\n---\nRun them.\n",
    )
    write_agent(root, "free.md", "---\ndescription: all tools\ntools: all\n---\nGo.\n")
    agents = load_agents(root)
    assert agents["tester"].tools == ("read", "bash")
    assert agents["tester"].max_steps == 3
    assert agents["free"].tools is None


def test_malformed_files_are_reported_and_the_others_still_load(root: Path) -> None:
    bad = {
        "unclosed.md": "---\ndescription: x\nnever closed\n",
        "yaml.md": "---\nname: yaml\ndescription: a: b\n---\nbody\n",
        "nodesc.md": "---\nname: nodesc\n---\nbody\n",
        "steps.md": "---\ndescription: x\nmaxsteps: many\n---\nbody\n",
        "badname.md": "---\nname: has space\ndescription: x\n---\nbody\n",
        "empty.md": "---\ndescription: x\n---\n\n",
        "list.md": "---\n- a\n- b\n---\nbody\n",
        "tools.md": "---\ndescription: x\ntools: {read: true}\n---\nbody\n",
    }
    for filename, text in bad.items():
        write_agent(root, filename, text)
    (root / ".totem" / "agents" / "binary.md").write_bytes(b"\xff\xfe\x00bad")
    write_agent(root, "good.md", "---\ndescription: fine\n---\nWorks.\n")
    problems: list[str] = []
    agents = load_agents(root, problems=problems)
    assert "good" in agents and "explore" in agents and "general" in agents
    for filename in [*bad, "binary.md"]:
        assert Path(filename).stem not in agents
        [problem] = [p for p in problems if filename in p]
        assert "not loaded" in problem
    assert len(problems) == len(bad) + 1
    text = "\n".join(problems)
    assert "never closed" in text
    assert "invalid YAML" in text and "line 3 of the file" in text
    assert "no description" in text
    assert "maxsteps must be a whole number" in text
    assert "'has space' is not valid" in text
    assert "prompt" in text and "empty" in text


def test_unknown_fields_are_noted_but_the_agent_loads(root: Path) -> None:
    write_agent(root, "colour.md", "---\ndescription: x\ncolor: blue\n---\nbody\n")
    problems: list[str] = []
    assert "colour" in load_agents(root, problems=problems)
    assert problems == [
        f"Agent file {root / '.totem/agents/colour.md'}: unknown field(s) color ignored."
    ]


def test_without_a_problems_list_errors_are_silent(root: Path) -> None:
    write_agent(root, "broken.md", "---\ndescription: x\n")
    assert "broken" not in load_agents(root)


def test_markdown_round_trip() -> None:
    agent = AgentDef(
        name="reviewer",
        description="Reviews: a change, with 'quotes' and a colon",
        tools=("read", "grep"),
        max_steps=7,
        model="anthropic/claude-sonnet-4",
        prompt="Line one.\n\n---\nA rule inside the prompt.",
        source="file",
    )
    text = to_markdown(agent)
    assert "tools: [read, grep]" in text
    assert parse_agent(text, source="file") == agent
    bare = AgentDef(name="x", description="d", prompt="p", source="global")
    back = parse_agent(to_markdown(bare), source="global")
    assert back == bare and back.tools is None


def test_split_front_matter() -> None:
    assert split_front_matter("no header\n") == ({}, "no header\n")
    assert split_front_matter("\ufeff---\r\na: 1\r\n---\r\nbody\r\n") == ({"a": 1}, "body\r\n")
    assert split_front_matter("---\n---\nbody") == ({}, "body")
    with pytest.raises(FrontMatterError, match="never closed"):
        split_front_matter("---\na: 1\n")


def test_parse_tools() -> None:
    assert parse_tools(None) is None
    assert parse_tools("*") is None
    assert parse_tools(["read", "read", " grep "]) == ("read", "grep")
    assert parse_tools("") == ()
    assert parse_tools([]) == ()
    with pytest.raises(AgentError):
        parse_tools(3)


def test_project_key_is_the_resolved_root(root: Path) -> None:
    assert project_key(root / "sub" / "..") == str(root.resolve())


def test_sqlite_connection_is_only_used_when_given(root: Path) -> None:
    db = sqlite3.connect(":memory:")
    from totem.store.migrations import migrate

    migrate(db)
    assert set(load_agents(root, db)) == {"explore", "general"}
    db.close()
