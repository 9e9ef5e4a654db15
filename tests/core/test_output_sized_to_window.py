"""A tool's output is kept to a quarter of the model's window when the window is known
(`totem run` against the package's fake OpenAI server, real HTTP): on an 8k window one read
of a long README filled the request, was compacted away, read again, and the run ended in the
repeat guard."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.headless import Project

READ = {"tool": "read", "args": {"path": "README.md"}}
LINE = "A line of the project's README, about as long as lines of prose in a README are.\n"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    (project.root / "README.md").write_text(LINE * 600)  # ~50,000 characters
    return project


def _read_result(project: Project) -> str:
    last = project.chats()[-1]
    return next(str(m["content"]) for m in last["messages"] if m["role"] == "tool")


def test_on_an_8k_window_a_read_keeps_a_quarter_of_it(project: Project) -> None:
    with project.serve([READ, {"text": "It is a README."}]):
        config = project.tmp / "totem.yaml"
        config.write_text(config.read_text().replace(
            "kind: openai,", "kind: openai, models: {m: {context: 8192}},"))
        done = project.totem("run", "--yes", "what is in the README?")
    assert done.returncode == 0, done.stderr
    result = _read_result(project)
    assert 6_000 < len(result) <= 8_192 + 200  # 8,192 characters, and the note after them
    assert "Output limit reached" in result and "offset=" in result


def test_without_a_known_window_the_configured_limit_holds(project: Project) -> None:
    with project.serve([READ, {"text": "It is a README."}]):
        done = project.totem("run", "--yes", "what is in the README?")
    assert done.returncode == 0, done.stderr
    result = _read_result(project)
    assert 29_000 < len(result) <= 30_000 + 200
    assert "Output limit reached" in result
