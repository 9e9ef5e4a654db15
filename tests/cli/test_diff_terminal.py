"""Diffs in the terminal (a pty) and in `totem run --format json`: the permission question of
write, edit and patch shows the unified diff; a finished change shows its diff stat."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.chat_pty import chat_in_terminal
from tests.support.headless import Project, json_lines

MOVE = "\n".join(["*** Begin Patch", "*** Update File: b.txt", "*** Move to: c.txt", "@@",
                  "-b", "+B", "*** End Patch"])


def test_the_question_shows_the_diff_and_the_result_its_stat(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (project.root / "a.txt").write_text("one\nkeep\n")
    (project.root / "b.txt").write_text("b\n")
    turns = [{"tool": "read", "args": {"path": "a.txt"}},
             {"tool": "edit", "args": {"path": "a.txt", "old_string": "one", "new_string": "two"}},
             {"tool": "read", "args": {"path": "b.txt"}},
             {"tool": "patch", "args": {"patch": MOVE}},
             {"text": "Both done."}]
    with project.serve(turns), chat_in_terminal(project) as terminal:
        terminal.send(b"change them\r")
        terminal.expect("? edit wants to edit a.txt")
        terminal.expect("[y] once")
        question = terminal.screen.split("? edit wants to edit a.txt")[1]
        for line in ("--- a/a.txt", "+++ b/a.txt", "-one", "+two", " keep"):
            assert f"    {line}\n" in question
        terminal.send(b"y\r")
        terminal.expect("? patch wants to patch b.txt, c.txt")
        terminal.expect("[y] once", 2)
        moved = terminal.screen.split("? patch wants to patch")[1]
        assert "--- a/b.txt" in moved and "+++ b/c.txt" in moved and "+B" in moved
        terminal.send(b"y\r")
        terminal.expect("Both done.")
        assert terminal.leave() == 0
        if os.environ.get("TOTEM_SCREENSHOTS"):
            Path(os.environ["TOTEM_SCREENSHOTS"], "diff-question.txt").write_text(terminal.screen)
    assert "└ Edited a.txt: replaced 1 occurrence (+0 lines). · +1 -1" in terminal.screen
    assert (project.root / "c.txt").read_text() == "B\n"


def test_json_tool_end_carries_the_diff(tmp_path: Path) -> None:
    project = Project(tmp_path)
    turns = [{"tool": "write", "args": {"path": "new.txt", "content": "hello\n"}},
             {"text": "Made."}]
    with project.serve(turns):
        done = project.totem("run", "--yes", "--format", "json", "make it")
    assert done.returncode == 0, done.stderr
    end = next(e for e in json_lines(done.stdout) if e["type"] == "tool_end")
    assert end["diff"] == "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello"


def test_text_mode_prints_the_diff_of_a_change_nobody_was_asked_about(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (project.root / "a.txt").write_text("old\n")
    turns = [{"tool": "read", "args": {"path": "a.txt"}},
             {"tool": "write", "args": {"path": "a.txt", "content": "new\n"}}, {"text": "Ok."}]
    with project.serve(turns):
        done = project.totem("run", "--yes", "rewrite it")
    assert done.returncode == 0, done.stderr
    assert "· +1 -1\n    --- a/a.txt\n    +++ b/a.txt\n    @@ -1 +1 @@\n    -old\n    +new\n" \
        in done.stdout
