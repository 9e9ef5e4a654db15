"""A project extends totem: a command, a skill replacing a built-in one, an agent overriding a
saved one — each shown in a real `totem run` against the aimock simulator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.aimock import Aimock, aimock_fixture, fixture
from totem.agents.definitions import AgentDef
from totem.agents.saved import save_agent
from totem.messages import TextPart
from totem.store.sqlite import SqliteStore

pytestmark = pytest.mark.aimock


FIXTURES = [
    fixture("Review the file app.py for bugs and list them", {"content": "REVIEWED app.py"}),
    fixture("write a commit message", {"toolCalls": [
        {"name": "skill", "arguments": {"name": "commit-message"}}]}, 0),
    fixture("write a commit message", {"content": "Fix: the thing"}, 1),
    fixture("check the code", {"content": "checked"}),
    {"match": {}, "response": {"content": "catch-all"}},
]

aimock = aimock_fixture(FIXTURES)


def project(tmp: Path, url: str) -> tuple[Path, dict[str, str]]:
    root = tmp / "project"
    (root / ".totem" / "commands").mkdir(parents=True)
    (root / "app.py").write_text("print('hi')\n")
    config = tmp / "totem.yaml"
    config.write_text(
        f"model: mock/totem-test\nproviders:\n  mock: {{kind: openai, base_url: '{url}'}}\n"
    )
    env = dict(os.environ, TOTEM_CONFIG=str(config), XDG_DATA_HOME=str(tmp / "data"),
               XDG_CONFIG_HOME=str(tmp / "cfg"))
    return root, env


def totem(root: Path, env: dict[str, str], *args: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "totem", "run", "--format", "json", *args], cwd=root, env=env,
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def last_request(aimock: Aimock) -> dict[str, Any]:
    body: dict[str, Any] = aimock.journal()[-1]["body"]
    return body


def test_a_command_with_arguments(aimock: Aimock, tmp_path: Path) -> None:
    root, env = project(tmp_path, aimock.url)
    (root / ".totem/commands/review.md").write_text(
        "---\ndescription: Review a file\n---\nReview the file $ARGUMENTS for bugs and list them.\n"
    )
    events = totem(root, env, "/review app.py")
    assert "REVIEWED app.py" in "".join(e.get("text", "") for e in events if e["type"] == "text")
    sent = last_request(aimock)["messages"][-1]
    assert sent["role"] == "user"
    assert sent["content"] == "Review the file app.py for bugs and list them."
    store = SqliteStore(tmp_path / "data/totem/totem.db")
    session = store.list_sessions(str(root.resolve()))[0]
    typed = store.messages(session.id)[0].parts[0]
    assert isinstance(typed, TextPart) and typed.text == "/review app.py"
    assert typed.model_text == "Review the file app.py for bugs and list them."


def test_a_project_skill_replaces_the_built_in_one(aimock: Aimock, tmp_path: Path) -> None:
    root, env = project(tmp_path, aimock.url)
    skill = root / ".totem/skills/commit-message"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: commit-message\ndescription: Our house style for commit messages\n---\n"
        "PROJECT RULES: start with the ticket number.\n"
    )
    events = totem(root, env, "write a commit message")
    end = next(e for e in events if e["type"] == "tool_end")
    assert not end["is_error"] and "PROJECT RULES" in end["output"]
    system = next(m for m in aimock.journal()[-2]["body"]["messages"] if m["role"] == "system")
    assert "Our house style for commit messages" in system["content"]


def test_a_project_agent_overrides_a_saved_one(aimock: Aimock, tmp_path: Path) -> None:
    root, env = project(tmp_path, aimock.url)
    store = SqliteStore(tmp_path / "data/totem/totem.db")
    saved = AgentDef(name="reviewer", description="saved one", prompt="SAVED PROMPT",
                     source="global")
    save_agent(store.db, saved, project=None)
    store.close()
    events = totem(root, env, "--agent", "reviewer", "check the code")
    assert events[-2]["reason"] == "finished"  # the last line is the result object
    system = next(m for m in last_request(aimock)["messages"] if m["role"] == "system")
    assert "SAVED PROMPT" in system["content"]
    (root / ".totem/agents").mkdir()
    (root / ".totem/agents/reviewer.md").write_text(
        "---\nname: reviewer\ndescription: project one\ntools: [read, grep]\n---\n"
        "PROJECT PROMPT: review like we do here.\n"
    )
    totem(root, env, "--agent", "reviewer", "check the code")
    request = last_request(aimock)
    system = next(m for m in request["messages"] if m["role"] == "system")
    assert "PROJECT PROMPT" in system["content"] and "SAVED PROMPT" not in system["content"]
    assert sorted(t["function"]["name"] for t in request["tools"]) == ["grep", "read"]
