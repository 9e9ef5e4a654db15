"""the primer is in the system prompt of the agent and of its sub-agents in Total.js
projects, and nowhere else; the conventions skill is offered in the same projects."""

from __future__ import annotations

from pathlib import Path

from tests.support.knowledge_runs import run_session
from totem.knowledge.totaljs import TOTALJS
from totem.settings.config import KnowledgeSettings
from totem.testing.scripted import call, reply

PRIMER = TOTALJS.primer()
SKILL = "- totaljs-conventions:"


def project(tmp: Path, files: dict[str, str] | None = None) -> Path:
    root = tmp / "project"
    root.mkdir()
    for name, text in (files or {}).items():
        (root / name).write_text(text)
    return root


def test_the_primer_is_compact_and_says_what_it_must() -> None:
    assert len(PRIMER) // 4 < 900  # tokens, at about four characters each
    for needed in ("NEWACTION('Orders|create'", "ROUTE('GET /', index);", "COMPONENT('counter'",
                   "self.make = function()", "self.setter = function(value)", "schemas/",
                   "controllers/", "definitions/", "public/", "views/", "tabs", "semicolons",
                   "single quotes", "var", "lowercase file names", "Namespace|action",
                   "not Java Swing", "look it up", "Do not invent functions"):
        assert needed in PRIMER, needed


def test_a_new_folder_gets_the_primer_and_the_skill(tmp_path: Path) -> None:
    ran = run_session(tmp_path, project(tmp_path), ["hello"], [reply("hi")])
    system = ran.requests[0].system
    assert PRIMER in system and SKILL in system
    assert system.index("<env>") < system.index(PRIMER) < system.index("Skills:")


def test_a_total5_project_gets_it_after_its_instructions(tmp_path: Path) -> None:
    root = project(tmp_path, {"package.json": '{"dependencies": {"total5": "latest"}}',
                              "AGENTS.md": "HOUSE RULES here."})
    system = run_session(tmp_path, root, ["hello"], [reply("hi")]).requests[0].system
    assert system.index("HOUSE RULES") < system.index(PRIMER)


def test_other_projects_get_neither(tmp_path: Path) -> None:
    root = project(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n"})
    system = run_session(tmp_path, root, ["hello"], [reply("hi")]).requests[0].system
    assert PRIMER not in system and "Total.js" not in system and SKILL not in system
    node = tmp_path / "node"
    node.mkdir()
    (node / "package.json").write_text('{"dependencies": {"express": "^4"}}')
    system = run_session(node, node, ["hello"], [reply("hi")]).requests[0].system
    assert PRIMER not in system and SKILL not in system


def test_never_and_conventions_false(tmp_path: Path) -> None:
    root = project(tmp_path)
    never = KnowledgeSettings(totaljs="never")
    system = run_session(tmp_path, root, ["hello"], [reply("hi")], knowledge=never).requests[0]
    assert PRIMER not in system.system and SKILL not in system.system
    quiet = KnowledgeSettings(conventions=False)
    other = tmp_path / "other"
    other.mkdir()
    request = run_session(other, other, ["hello"], [reply("hi")], knowledge=quiet).requests[0]
    assert PRIMER in request.system and SKILL not in request.system


def test_a_project_skill_of_the_same_name_replaces_the_built_in_one(tmp_path: Path) -> None:
    root = project(tmp_path, {"pyproject.toml": "[project]\n"})
    skill = root / ".totem/skills/totaljs-conventions"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\ndescription: OUR OWN conventions\n---\nTabs.\n")
    system = run_session(tmp_path, root, ["hello"], [reply("hi")]).requests[0].system
    assert "- totaljs-conventions: OUR OWN conventions" in system


def test_sub_agents_get_the_primer_too(tmp_path: Path) -> None:
    turns = [call(("task", {"agent": "explore", "prompt": "find the routes"})),
             reply("no routes yet"), reply("done")]
    ran = run_session(tmp_path, project(tmp_path), ["look around"], turns)
    assert len(ran.requests) == 3
    sub = ran.requests[1]
    assert sub.system != ran.requests[0].system and PRIMER in sub.system
    assert [m.role for m in sub.messages] == ["user"]
