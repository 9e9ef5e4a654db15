"""Skills: built in and project ones (a project skill replaces a built-in one), the prompt
section, and the `skill` tool."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.support.project_files import write_file
from totem.abort import AbortSignal
from totem.policy.permission import PermissionService
from totem.skills import load_skills, skills_prompt
from totem.tools.base import ToolContext, ToolError, ToolResult, ToolSettings, parse_arguments
from totem.tools.lazy import LazyTool
from totem.tools.skill import Skill


def write_skill(root: Path, folder: str, text: str) -> Path:
    return write_file(root / ".totem" / "skills" / folder / "SKILL.md", text)


def call_skill(root: Path, name: str) -> ToolResult:
    ctx = ToolContext(
        root=root,
        session_id="ses_test",
        call_id="call_test",
        abort=AbortSignal(),
        permission=PermissionService(rules=(), mode="headless", project=str(root)),
        settings=ToolSettings(),
        tool_name="skill",
    )
    tool = LazyTool("skill", True, "totem.tools.skill:Skill")  # as the registry will load it
    args = parse_arguments(tool, {"name": name})
    return asyncio.run(tool.run(args, ctx))


def test_the_builtin_skill(root: Path) -> None:
    problems: list[str] = []
    skills = load_skills(root, problems=problems)
    assert problems == []
    skill = skills["commit-message"]
    assert skill.source == "builtin"
    assert "commit" in skill.description
    assert skill.body.startswith("# Writing a commit message")
    assert "---" not in skill.body.splitlines()[0]
    assert skill.folder.name == "commit-message"


def test_a_project_skill_replaces_a_builtin_one_and_adds_others(root: Path) -> None:
    path = write_skill(
        root,
        "commit-message",
        "---\nname: commit-message\ndescription: Our commit rules\n---\n"
        "Use Conventional Commits.\n",
    )
    write_skill(root, "deploy", "---\ndescription: How we deploy\n---\nRun ./deploy.sh\n")
    skills = load_skills(root)
    replaced = skills["commit-message"]
    assert (replaced.source, replaced.description, replaced.body, replaced.path) == (
        "project",
        "Our commit rules",
        "Use Conventional Commits.",
        path,
    )
    assert skills["deploy"].source == "project"


def test_malformed_skills_are_reported_and_skipped(root: Path) -> None:
    write_skill(root, "nodesc", "---\nname: nodesc\n---\nbody\n")
    write_skill(root, "badyaml", "---\ndescription: [x\n---\nbody\n")
    write_skill(root, "empty", "---\ndescription: nothing here\n---\n")
    write_skill(root, "renamed", "---\nname: other\ndescription: d\n---\nbody\n")
    (root / ".totem" / "skills" / "no-file").mkdir()
    problems: list[str] = []
    skills = load_skills(root, problems=problems)
    assert {"nodesc", "badyaml", "empty"}.isdisjoint(skills)
    assert "commit-message" in skills and "no-file" not in skills
    assert skills["renamed"].name == "renamed"
    assert len(problems) == 4
    by_folder = {Path(p.split(":")[0].removeprefix("Skill ")).parent.name: p for p in problems}
    assert "no description" in by_folder["nodesc"]
    assert "invalid YAML" in by_folder["badyaml"]
    assert "empty" in by_folder["empty"]
    assert "'other' differs from its folder" in by_folder["renamed"]
    assert "not loaded" not in by_folder["renamed"]


def test_skills_prompt_lists_names_and_descriptions_only(root: Path) -> None:
    write_skill(root, "deploy", "---\ndescription: >-\n  How we\n  deploy\n---\nSECRET BODY\n")
    text = skills_prompt(load_skills(root))
    assert "skill tool" in text
    assert "- deploy: How we deploy" in text
    assert "- commit-message: " in text
    assert "SECRET BODY" not in text
    assert text.index("commit-message") < text.index("deploy")
    assert skills_prompt({}) == ""


def test_the_skill_tool_returns_the_body_and_its_folder(root: Path) -> None:
    path = write_skill(
        root, "deploy", "---\ndescription: How we deploy\n---\nRun scripts/deploy.sh\n"
    )
    (path.parent / "scripts").mkdir()
    (path.parent / "scripts" / "deploy.sh").write_text("echo deploy\n")
    result = call_skill(root, "deploy")
    assert result.title == "skill deploy"
    assert result.output.splitlines()[:3] == [
        "Skill: deploy",
        "Folder: .totem/skills/deploy (paths in the skill are relative to this folder)",
        "Files: scripts/deploy.sh",
    ]
    assert result.output.endswith("Run scripts/deploy.sh")
    assert "description" not in result.output


def test_the_skill_tool_finds_builtin_skills_and_forgives_case(root: Path) -> None:
    result = call_skill(root, "Commit-Message")
    assert "# Writing a commit message" in result.output
    assert "Files:" not in result.output


def test_an_unknown_skill_is_an_error_listing_the_available_ones(root: Path) -> None:
    write_skill(root, "deploy", "---\ndescription: d\n---\nbody\n")
    with pytest.raises(ToolError, match="Available skills: commit-message, deploy"):
        call_skill(root, "publish")


def test_the_tool_is_read_only_with_a_short_description() -> None:
    tool = Skill()
    assert tool.read_only and tool.name == "skill"
    assert len(tool.description) < 100
    schema = tool.Input.model_json_schema()
    assert schema["required"] == ["name"]
