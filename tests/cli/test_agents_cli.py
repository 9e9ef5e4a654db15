"""`totem agents`: list, show, create, edit, delete, on a store in tmp_path's XDG folders.

The handler runs in-process with a parser built by `add_parser`, as `totem` will build it.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from totem.agents.definitions import AgentDef, project_key
from totem.agents.saved import get_saved_agent
from totem.cli.agents import add_parser, agents_command
from totem.store.sqlite import SqliteStore

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def run(project: Path, capsys: pytest.CaptureFixture[str]) -> Run:
    parser = argparse.ArgumentParser(prog="totem")
    add_parser(parser.add_subparsers(dest="command"))

    def invoke(*argv: str) -> tuple[int, str, str]:
        args = parser.parse_args(["agents", *argv])
        code = agents_command(args)
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


def store_path(project: Path) -> Path:
    return project.parent / "xdg_data_home" / "totem" / "totem.db"


def saved_in(project: Path, name: str) -> AgentDef:
    store = SqliteStore(store_path(project))
    try:
        agent = get_saved_agent(store.db, name, project=project_key(project))
    finally:
        store.close()
    assert agent is not None
    return agent


def test_list_shows_the_builtin_agents(run: Run) -> None:
    code, out, err = run()
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ["explore", "general"]
    assert all("built in" in line for line in lines)
    assert run("list")[1] == out


def test_create_list_show(run: Run, project: Path) -> None:
    code, out, err = run(
        *shlex.split(
            "create reviewer --description 'Reviews a change' --tools read,grep "
            "--maxsteps 5 --model ollama/qwen3:8b --prompt 'Review it.'"
        )
    )
    assert (code, err) == (0, "")
    assert out == f"Saved the agent 'reviewer' for this project ({project}).\n"
    assert store_path(project).is_file()

    listed = run()[1]
    [line] = [line for line in listed.splitlines() if line.startswith("reviewer")]
    assert "saved, project" in line and "Reviews a change" in line

    code, out, _ = run("show", "reviewer")
    assert code == 0
    assert out == (
        "reviewer (saved, project)\n\n"
        "---\nname: reviewer\ndescription: Reviews a change\ntools: [read, grep]\n"
        "maxsteps: 5\nmodel: ollama/qwen3:8b\n---\nReview it.\n"
    )


def test_create_needs_a_description_and_a_prompt(run: Run) -> None:
    code, _, err = run("create", "x", "--tools", "read")
    assert code == 1 and "needs --description and --prompt" in err
    code, _, err = run("create", "x", "--description", "d")
    assert code == 1 and "needs --prompt" in err
    code, _, err = run("create", "bad name", "--description", "d", "--prompt", "p")
    assert code == 1 and "not valid" in err
    code, _, err = run("create", "x", "--description", "d", "--prompt", "p", "--maxsteps", "0")
    assert code == 1 and "maxsteps" in err


def test_create_twice_points_to_edit(run: Run) -> None:
    assert run("create", "x", "--description", "d", "--prompt", "p")[0] == 0
    code, _, err = run("create", "x", "--description", "d", "--prompt", "p")
    assert code == 1 and "totem agents edit x" in err


def test_prompt_from_a_file(run: Run, project: Path) -> None:
    (project / "prompt.md").write_text("From a file.\n\nTwo paragraphs.\n")
    code, _, err = run("create", "x", "--description", "d", "--prompt-file", "prompt.md")
    assert (code, err) == (0, "")
    assert run("show", "x")[1].endswith("---\nFrom a file.\n\nTwo paragraphs.\n")
    code, _, err = run("edit", "x", "--prompt-file", "missing.md")
    assert code == 1 and "cannot read the prompt file missing.md" in err


def test_edit_changes_only_the_fields_given(run: Run, project: Path) -> None:
    run(*"create x --description d --tools read --maxsteps 4 --model a/b --prompt p".split())
    code, out, err = run("edit", "x", "--description", "new description")
    assert (code, err) == (0, "")
    assert "description" in out
    agent = saved_in(project, "x")
    assert (agent.description, agent.tools, agent.max_steps, agent.model, agent.prompt) == (
        "new description",
        ("read",),
        4,
        "a/b",
        "p",
    )
    run("edit", "x", "--maxsteps", "none", "--model", "none", "--tools", "all")
    agent = saved_in(project, "x")
    assert (agent.tools, agent.max_steps, agent.model) == (None, None, None)
    code, _, err = run("edit", "x")
    assert code == 1 and "nothing to change" in err


def test_global_agents(run: Run, project: Path) -> None:
    code, out, _ = run("create", "helper", "--global", "--description", "d", "--prompt", "p")
    assert code == 0 and "for all projects" in out
    assert "saved, all projects" in run()[1]
    code, _, err = run("edit", "helper", "--description", "x")
    assert code == 1 and "saved for all projects; run the command again with --global" in err
    assert run("edit", "helper", "--global", "--description", "x")[0] == 0
    code, _, err = run("delete", "helper")
    assert code == 1 and "with --global" in err
    code, out, _ = run("delete", "helper", "--global")
    assert code == 0 and out == "Deleted the agent 'helper' saved for all projects.\n"
    assert "helper" not in run()[1]


def test_builtin_agents_are_read_only_but_can_be_replaced(run: Run) -> None:
    code, _, err = run("edit", "explore", "--description", "x")
    assert code == 1 and "built-in agent and cannot be changed" in err
    code, _, err = run("delete", "general")
    assert code == 1 and "totem agents create general" in err

    assert run("create", "explore", "--description", "mine", "--prompt", "p")[0] == 0
    assert run("show", "explore")[1].startswith("explore (saved, project)")
    code, out, _ = run("delete", "explore")
    assert code == 0 and "'explore' is now the agent from: built in." in out
    assert run("show", "explore")[1].startswith("explore (built in, ")


def test_file_agents_are_read_only_and_win_over_saved_ones(run: Run, project: Path) -> None:
    folder = project / ".totem" / "agents"
    folder.mkdir(parents=True)
    (folder / "docs.md").write_text("---\ndescription: writes docs\n---\nWrite docs.\n")
    [line] = [line for line in run()[1].splitlines() if line.startswith("docs")]
    assert "file .totem/agents/docs.md" in line

    code, _, err = run("edit", "docs", "--description", "x")
    assert code == 1 and "defined by the file" in err and "docs.md" in err

    code, out, _ = run("create", "docs", "--description", "saved", "--prompt", "p")
    assert code == 0
    assert "comes from file .totem/agents/docs.md, which replaces the saved one" in out


def test_unknown_agents(run: Run) -> None:
    code, _, err = run("show", "nobody")
    assert code == 1 and "no agent named 'nobody'" in err and "explore" in err
    code, _, err = run("delete", "nobody")
    assert code == 1 and "no agent named 'nobody' saved for this project" in err


def test_malformed_files_are_warned_about(run: Run, project: Path) -> None:
    folder = project / ".totem" / "agents"
    folder.mkdir(parents=True)
    (folder / "broken.md").write_text("---\ndescription: x\n")
    code, out, err = run()
    assert code == 0
    assert "broken.md" in err and "never closed" in err
    assert "broken" not in out
