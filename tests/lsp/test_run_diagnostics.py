"""Diagnostics end to end: `totem run` processes served by the package's fake OpenAI server
edit a Python project; basedpyright's new error reaches the model in the tool result and the
person in the tool_end event, its fix says it is gone. A project's own config may name a
language server (a program it would run) only once its folder is trusted."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from tests.support.headless import Project, json_lines
from tests.support.language_servers import python_server
from totem.cli.render import TextRenderer
from totem.events import ToolEnd

GOOD = "def add(a: int, b: int) -> int:\n    return a + b\n\n\ntotal: int = add(1, 2)\n"
BREAK = {"tool": "edit", "args": {"path": "app.py", "old_string": "add(1, 2)",
                                  "new_string": 'add(1, "two")'}}
FIX = {"tool": "edit", "args": {"path": "app.py", "old_string": 'add(1, "two")',
                                "new_string": "add(1, 2)"}}
# a "server" that only leaves a mark that it was started
MARKER = "import pathlib, sys\npathlib.Path(sys.argv[1]).write_text('started')\n"


def _tool_results(project: Project) -> list[str]:
    last = project.chats()[-1]
    return [str(m["content"]) for m in last["messages"] if m["role"] == "tool"]


def test_a_run_gets_the_new_error_in_the_edit_result_and_its_fix_clears_it(
        tmp_path: Path) -> None:
    server = python_server()
    project = Project(tmp_path)
    (project.root / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (project.root / "app.py").write_text(GOOD)
    project.config_extra = f"lsp: {{python: {{command: {json.dumps(list(server.command))}}}}}\n"
    read = {"tool": "read", "args": {"path": "app.py"}}
    with project.serve([read, BREAK, FIX, {"text": "Done."}]):
        done = project.totem("run", "--yes", "--format", "json", "break it, then fix it")
    assert done.returncode == 0, done.stderr
    _, broken, fixed = _tool_results(project)
    assert "[Diagnostics] app.py: 1 new error, from basedpyright-langserver:" in broken
    assert "line 5: error: Argument of type" in broken
    assert fixed.endswith("[Diagnostics] app.py: no errors now, from basedpyright-langserver.")
    ends = [e for e in json_lines(done.stdout) if e["type"] == "tool_end"][1:]
    assert ends[0]["diagnostics"].startswith("app.py: 1 new error")
    assert ends[1]["diagnostics"] == "app.py: no errors now, from basedpyright-langserver."
    shown = io.StringIO()  # the terminal's lines for the same event
    TextRenderer(shown).show(ToolEnd(**{k: v for k, v in ends[0].items() if k != "type"}))
    assert "  ⚠ app.py: 1 new error, from basedpyright-langserver:\n  ⚠ line 5: error: " in (
        shown.getvalue())


def _naming_project(tmp_path: Path) -> tuple[Project, Path]:
    project = Project(tmp_path)
    mark = tmp_path / "started.txt"
    script = tmp_path / "marker_server.py"
    script.write_text(MARKER)
    command = json.dumps([sys.executable, str(script), str(mark)])
    (project.root / ".totem").mkdir()
    (project.root / ".totem" / "config.yaml").write_text(
        f"lsp:\n  python: {{command: {command}, roots: []}}\n")
    return project, mark


def test_an_untrusted_project_cannot_name_a_language_server(tmp_path: Path) -> None:
    project, mark = _naming_project(tmp_path)
    write = {"tool": "write", "args": {"path": "new.py", "content": "x = 1\n"}}
    with project.serve([write, {"text": "Done."}]):
        done = project.totem("run", "--yes", "--format", "json", "write it")
    assert done.returncode == 0, done.stderr
    assert not mark.exists()
    notices = [e["text"] for e in json_lines(done.stdout) if e["type"] == "notice"]
    assert any("not trusted" in text and "lsp.python: runs the language server" in text
               for text in notices), notices


def test_a_trusted_project_may_name_one(tmp_path: Path) -> None:
    project, mark = _naming_project(tmp_path)
    write = {"tool": "write", "args": {"path": "new.py", "content": "x = 1\n"}}
    project.config_extra = "lsp: {python: {first_wait: 1}}\n"
    with project.serve([write, {"text": "Done."}]):
        done = project.totem("run", "--trust", "--yes", "--format", "json", "write it")
    assert done.returncode == 0, done.stderr
    assert mark.read_text() == "started"
