"""Reading ahead for a small model: which files are read for it, and how the run shows them
(real read calls, counted by the read-before-change rule)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.loop_agents import make_agent, run_once
from totem.events import RunFinished, ToolStart
from totem.messages import TextPart
from totem.run.read_ahead import budget_for, calls_ahead, named_terms, request_terms
from totem.testing.scripted import ScriptedProvider, call, reply
from totem.tools.edit import Edit
from totem.tools.glob import Glob
from totem.tools.grep import Grep
from totem.tools.read import Read
from totem.tools.write import Write

SMALL = "qwen2.5-coder-1.5b-instruct"
TOOLS = [Read(), Glob(), Grep(), Edit(), Write()]


def project(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def read_paths(root: Path, request: str, *, budget: int = 8_000) -> list[str]:
    calls = calls_ahead(root, request, budget=budget)
    assert calls[0].name == "glob"
    return [c.args["path"] for c in calls[1:]]


def test_a_small_project_is_read_whole_the_named_file_first(tmp_path: Path) -> None:
    root = project(tmp_path, {
        "README.md": "# Lantern\n", "app.py": "print('hi')\n",
        "config/server.ini": "[web]\nport = 8437\n",
        ".git/HEAD": "ref: refs/heads/main\n", "node_modules/x/index.js": "x\n",
        "logo.png": b"\x89PNG\r\n\x1a\n\0\0\0binary",
    })
    paths = read_paths(root, "What port is set in server.ini?")
    assert paths[0] == "config/server.ini"
    assert sorted(paths) == ["README.md", "app.py", "config/server.ini"]


def test_past_the_budget_only_the_files_that_concern_the_request(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"pkg/module_{i}.py": f"def f{i}():\n    return {i}\n" * 40
                                     for i in range(30)}
    files["pkg/uploads.py"] = "MAX_UPLOAD_MB = 25\n"
    files["README.md"] = "# Big\n" + "text\n" * 2000
    root = project(tmp_path, files)
    assert read_paths(root, "Raise the maximum upload size to 100 MB.") == ["pkg/uploads.py"]
    # nothing in common with the request: the README, for a start, as much as fits
    calls = calls_ahead(root, "Tell me about this thing.", budget=8_000)
    assert [c.args for c in calls[1:]] == [{"path": "README.md", "limit": 60}]


def test_an_empty_folder_has_nothing_to_read(tmp_path: Path) -> None:
    assert calls_ahead(tmp_path, "Create a file named NOTES.md", budget=8_000) == []


def test_terms_are_names_and_rare_words() -> None:
    terms = request_terms("Rename calc_ttl to computeTtl in the cache file, please.")
    assert {"calc_ttl", "ttl", "calc", "computettl", "compute", "cache"} <= terms
    assert not {"the", "please", "file", "rename"} & terms


def test_the_budget_follows_the_window() -> None:
    assert budget_for(None) == 8_000
    assert budget_for(8_192) == 12_288
    assert budget_for(4_096) == 2_000 and budget_for(131_072) == 16_000


def test_the_run_reads_ahead_and_the_model_edits_what_it_was_shown(tmp_path: Path) -> None:
    provider = ScriptedProvider([
        # the first step edits at once: the read made ahead counts as the model's own
        call(("edit", {"path": "utils.py", "old_string": "recieve", "new_string": "receive"})),
        reply("Fixed the typo in utils.py."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    agent.read_ahead = True
    project(agent.root, {"utils.py": "def recieve(data):\n    return data\n"})
    _, events = run_once(agent, "Fix the typo 'recieve' in utils.py.")
    end = events[-1]
    assert isinstance(end, RunFinished) and end.reason == "finished"
    assert (agent.root / "utils.py").read_text().startswith("def receive(")
    started = [(e.name, e.input) for e in events if isinstance(e, ToolStart)]
    assert started[:2] == [("glob", {"pattern": "**/*"}),
                           ("read", {"path": "utils.py"})]
    first = provider.requests[0]
    results = [p.output for m in first.messages for p in m.parts if hasattr(p, "output")]
    assert any("def recieve(data):" in r for r in results)


def test_a_greeting_and_a_large_model_get_no_reading_ahead(tmp_path: Path) -> None:
    provider = ScriptedProvider([reply("Hello!"), reply("It prints hi.")])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    agent.read_ahead = True
    project(agent.root, {"app.py": "print('hi')\n"})
    sid, events = run_once(agent, "hi there")
    assert not [e for e in events if isinstance(e, ToolStart)]
    agent.read_ahead = False
    _, events = run_once(agent, "What does app.py print?", session_id=sid)
    assert not [e for e in events if isinstance(e, ToolStart)]
    texts = [p.text for m in provider.requests[1].messages for p in m.parts
             if isinstance(p, TextPart)]
    assert texts[-1] == "What does app.py print?"


def test_names_in_the_request_are_searched_for(tmp_path: Path) -> None:
    root = project(tmp_path, {"store.py": "import sqlite3\n", "web.py": "from store import x\n",
                              "shapes.py": "def area_of(w, h):\n    return w * h\n"})
    question = calls_ahead(root, "Which function connects to Redis?", budget=8_000,
                           question=True)
    assert question[-1].name == "grep" and question[-1].args == {"pattern": "[Rr]edis"}
    change = calls_ahead(root, "Rename area_of to rectangle_area everywhere, and in Redis.",
                         budget=8_000)
    # for a change only the names the project has: the new name and Redis are nowhere
    assert [c.args for c in change if c.name == "grep"] == [{"pattern": "[Aa]rea_of"}]


def test_named_terms_are_names_not_words() -> None:
    assert named_terms("Which file defines the LedgerReconciler class?") == ["LedgerReconciler"]
    assert named_terms("In cache_utils.py, rename calc_ttl to `ttl`.") == ["calc_ttl", "ttl"]
    assert named_terms("What port does the web server listen on?") == []
    assert named_terms("There is a spelling mistake in README.md. Please fix it.") == []


def test_a_search_keeps_to_the_folder_the_request_names(tmp_path: Path) -> None:
    root = project(tmp_path, {"src/a.py": "# TODO: one\n", "src/sub/b.py": "# TODO: two\n",
                              "docs/plan.md": "TODO: decoy\n"})
    calls = calls_ahead(root, "How many TODO comments are there in the src folder?",
                        budget=8_000, question=True)
    assert calls[-1].args == {"pattern": "[Tt]ODO", "path": "src"}
    calls = calls_ahead(root, "How many TODO comments are there?", budget=8_000, question=True)
    assert calls[-1].args == {"pattern": "[Tt]ODO"}


def test_a_bigger_project_is_listed_by_its_top_folder(tmp_path: Path) -> None:
    root = project(tmp_path, {f"pkg/m{i}.py": f"x = {i}\n" for i in range(70)})
    calls = calls_ahead(root, "What does this project do?", budget=8_000)
    assert calls[0].name == "read" and calls[0].args == {"path": "."}


def test_a_failing_test_the_request_names_is_run_ahead_and_is_no_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """"The test in test_slug.py fails": the model starts from the test's error; that run
    is totem's looking, so an answer that changes nothing is still asked to act."""
    import os
    import sys

    from totem.tools.bash import Bash

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    provider = ScriptedProvider([
        reply("The test fails because slugify does not lowercase."),
        call(("edit", {"path": "slug.py", "old_string": "return title",
                       "new_string": "return title.lower()"})),
        reply("slugify now lowercases."),
    ])
    agent = make_agent(tmp_path, provider, tools=[*TOOLS, Bash()], model=SMALL)
    agent.read_ahead = True
    project(agent.root, {"slug.py": "def slugify(title):\n    return title\n",
                         "test_slug.py": "from slug import slugify\n\n\ndef test_it():\n"
                                         "    assert slugify('A') == 'a'\n"})
    _, events = run_once(agent, "The test in test_slug.py fails. Fix the code so that it "
                                "passes, without changing the test.")
    started = [(e.name, e.input) for e in events if isinstance(e, ToolStart)]
    assert ("bash", {"command": "python -m pytest -q -p no:cacheprovider test_slug.py"}) \
        == started[3]
    first = provider.requests[0]
    results = [p.output for m in first.messages for p in m.parts if hasattr(p, "output")]
    assert any("assert 'A' == 'a'" in r for r in results)
    assert (agent.root / "slug.py").read_text().endswith("return title.lower()\n")
    end = events[-1]
    assert isinstance(end, RunFinished) and end.reason == "finished"


def _python_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import sys

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")


def test_the_project_test_command_follows_what_the_project_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _python_on_path(monkeypatch)
    from totem.run.test_commands import asks_test_run, project_test_command

    assert project_test_command(project(tmp_path / "empty", {"a.py": "x = 1\n"})) is None
    assert project_test_command(project(tmp_path / "py", {"t/test_a.py": ""})) \
        == "python -m pytest -q -p no:cacheprovider"
    assert project_test_command(project(tmp_path / "py", {}), brief=True).endswith("--tb=no")
    node = project(tmp_path / "node", {"package.json": '{"scripts": {"test": "vitest"}}',
                                       "a.test.js": ""})
    assert project_test_command(node) == "npm test"
    assert project_test_command(project(tmp_path / "bad", {"package.json": "[1,"})) is None
    assert project_test_command(project(tmp_path / "rs", {"Cargo.toml": ""})) == "cargo test"
    assert asks_test_run("How many tests fail?") and asks_test_run("run the test suite")
    assert not asks_test_run("Write a test for clamp") and not asks_test_run("Run the app")


def test_asked_to_run_the_tests_only_the_listing_and_the_run_come_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _python_on_path(monkeypatch)
    root = project(tmp_path, {"tests/test_a.py": "def test_a():\n    assert False\n",
                              "a.py": "x = 1\n"})
    calls = calls_ahead(root, "Run the tests and tell me which fail.", budget=8_000)
    assert [(c.name, c.args) for c in calls] == [
        ("glob", {"pattern": "**/*"}),
        ("bash", {"command": "python -m pytest -q -p no:cacheprovider --tb=no"})]
    fix = calls_ahead(root, "Make the failing test pass.", budget=8_000)
    assert [c.name for c in fix] == ["glob", "read", "read", "bash"]
    assert fix[-1].args == {"command": "python -m pytest -q -p no:cacheprovider"}
