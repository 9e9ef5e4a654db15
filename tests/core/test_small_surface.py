"""What a small model is given (a few flat tools, a short prompt) and what a hosted one keeps."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from totem.config import Config
from totem.loop import Agent
from totem.providers.fake import ScriptedProvider, reply
from totem.session import SessionService
from totem.store.sqlite import SqliteStore

SMALL = "qwen2.5-coder-0.5b-instruct"
SMALL_PROMPT = (Path(__file__).parents[2] / "src/totem/prompt/small.txt").read_text().strip()


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
