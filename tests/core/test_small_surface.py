"""What a small model is given (a few flat tools, a short prompt) and what a hosted one keeps."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from totem.run.loop import Agent
from totem.session.service import SessionService
from totem.settings.config import Config
from totem.store.sqlite import SqliteStore
from totem.testing.scripted import ScriptedProvider, call, reply

SMALL = "qwen2.5-coder-0.5b-instruct"
SMALL_PROMPT = (Path(__file__).parents[2]
                / "src/totem/smallmodel/texts/system.txt").read_text().strip()


def agent_for(tmp_path: Path, root: Path, model: str) -> Agent:
    async def build() -> Agent:
        service = SessionService(root, mode="yes", config=Config(model="m"),
                                 store=SqliteStore(tmp_path / "store.db"),
                                 provider=ScriptedProvider([reply("ok")]))
        try:
            return service.agent(model)
        finally:
            await service.aclose()

    return asyncio.run(build())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("PORT = 8437\n")
    return project


def test_a_small_model_gets_six_tools_with_flat_short_arguments(tmp_path: Path,
                                                                 root: Path) -> None:
    agent = agent_for(tmp_path, root, SMALL)
    assert [t.name for t in agent.tools] == ["read", "glob", "grep", "edit", "write", "bash"]
    specs = {s.name: s for s in agent.specs or []}
    assert list(specs) == [t.name for t in agent.tools]
    assert specs["read"].parameters == {
        "type": "object",
        "properties": {"path": {"type": "string", "description":
                                "the path of the file or folder, relative to the project folder"}},
        "required": ["path"],
    }
    assert list(specs["edit"].parameters["properties"]) == ["path", "old_string", "new_string"]
    assert list(specs["bash"].parameters["properties"]) == ["command"]
    assert list(specs["glob"].parameters["properties"]) == ["pattern"]
    for spec in specs.values():
        assert len(spec.description) < 130, spec.name
        for prop in spec.parameters["properties"].values():
            assert set(prop) == {"type", "description"} and len(prop["description"]) < 80


def test_a_small_model_gets_the_short_prompt_without_skills(tmp_path: Path, root: Path) -> None:
    system = agent_for(tmp_path, root, SMALL).system
    assert system.startswith(SMALL_PROMPT)
    assert "Skills:" not in system and "todo" not in system and "ask" not in system.split()
    assert f"working directory: {root}" in system
    assert len(system) < 2500


def test_the_framework_primer_only_for_a_project_that_uses_it(tmp_path: Path,
                                                               root: Path) -> None:
    plain = agent_for(tmp_path, root, SMALL).system
    (root / "package.json").write_text('{"dependencies": {"total5": "latest"}}')
    total = agent_for(tmp_path, root, SMALL).system
    assert "Total.js" not in plain and "Total.js" in total


def test_a_hosted_model_keeps_every_tool_and_the_full_prompt(tmp_path: Path,
                                                              root: Path) -> None:
    agent = agent_for(tmp_path, root, "claude-sonnet-4-5")
    names = [t.name for t in agent.tools]
    assert {"patch", "todo", "skill", "ask", "fetch", "process"} <= set(names)
    assert agent.system.startswith("You are totem, a coding agent")
    assert "Skills:" in agent.system
    edit = next(s for s in agent.specs or [] if s.name == "edit")
    assert "replace_all" in edit.parameters["properties"]


def test_a_new_folder_claimed_by_the_pack_gives_a_small_model_no_primer(tmp_path: Path) -> None:
    folder = tmp_path / "new"
    folder.mkdir()
    (folder / "README.md").write_text("# Greeter\n")
    assert "Total.js" in agent_for(tmp_path, folder, "claude-sonnet-4-5").system  # as before
    assert "Total.js" not in agent_for(tmp_path, folder, SMALL).system


def test_a_small_model_in_a_new_folder_runs_without_the_documentation_search(
    tmp_path: Path,
) -> None:
    from totem.abort import AbortSignal
    from totem.events import Event, Notice

    folder = tmp_path / "new"
    folder.mkdir()
    (folder / "README.md").write_text("# Greeter\n")
    provider = ScriptedProvider([call(("read", {"path": "README.md"})), reply("A greeter.")])

    async def go() -> list[Event]:
        service = SessionService(folder, mode="yes", config=Config(model="m"),
                                 store=SqliteStore(tmp_path / "store.db"), provider=provider)
        try:
            session = service.open(model=SMALL)
            run = service.run(session, "Create a page that greets the visitor",
                              abort=AbortSignal(), model=SMALL)
            return [e async for e in run]
        finally:
            await service.aclose()

    events = asyncio.run(go())
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert not any("forge" in n or "documentation" in n.lower() for n in notices), notices
    assert "Total.js" not in provider.requests[0].system
