"""Undo and redo as a person uses them: `totem run --yes` changes files through the real
tools (on the package's fake server), then `totem undo` / `totem redo` put them back."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.headless import Project
from totem.messages import TextPart

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\xff\xfe binary \x00"
PATCH = "\n".join([
    "*** Begin Patch",
    "*** Delete File: gone.txt",
    "*** Update File: old.txt",
    "*** Move to: moved/old.txt",
    "@@",
    " keep",
    "-x",
    "+y",
    "*** End Patch",
])


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    (project.root / "a.txt").write_text("one\n")
    (project.root / "old.txt").write_text("keep\nx\n")
    (project.root / "gone.txt").write_text("bye\n")
    (project.root / "logo.png").write_bytes(PNG)
    return project


def _reads(*paths: str) -> dict[str, object]:
    """One step reading `paths`: a file is changed only after it was read."""
    return {"calls": [{"tool": "read", "args": {"path": p}} for p in paths]}


def _every_change() -> list[dict[str, object]]:
    return [_reads("a.txt", "old.txt", "gone.txt", "logo.png"), {"calls": [
        {"tool": "write", "args": {"path": "new.txt", "content": "fresh\n"}},
        {"tool": "edit", "args": {"path": "a.txt", "old_string": "one", "new_string": "two"}},
        {"tool": "patch", "args": {"patch": PATCH}},
        {"tool": "write", "args": {"path": "logo.png", "content": "not a picture\n"}},
    ]}, {"text": "Done."}]


def _state(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_undo_puts_back_created_modified_deleted_renamed_and_binary_files(
    project: Project,
) -> None:
    before = _state(project.root)
    with project.serve(_every_change()):
        ran = project.totem("run", "--yes", "change everything")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        after = _state(project.root)
        assert after["new.txt"] == b"fresh\n" and "gone.txt" not in after
        assert after["moved/old.txt"] == b"keep\ny\n" and after["logo.png"] != PNG
        undone = project.totem("undo")
    assert undone.returncode == 0, undone.stderr
    assert _state(project.root) == before
    for line in ("removed new.txt", "restored a.txt", "recreated gone.txt",
                 "recreated old.txt", "removed moved/old.txt", "restored logo.png"):
        assert line in undone.stdout
    redone = project.totem("redo")
    assert redone.returncode == 0, redone.stderr
    assert _state(project.root) == after
    again = project.totem("redo")
    assert again.returncode == 1 and "Nothing to redo" in again.stderr


def test_the_model_sees_that_the_change_was_undone(project: Project) -> None:
    turns = [{"tool": "write", "args": {"path": "new.txt", "content": "x"}}, {"text": "Made."},
             {"text": "Understood."}]
    with project.serve(turns):
        assert project.totem("run", "--yes", "make new.txt").returncode == 0
        assert project.totem("undo").returncode == 0
        assert project.totem("run", "--continue", "what is there now?").returncode == 0
        sent = project.chats()[-1]["messages"]
    texts = [m.get("content") or "" for m in sent if m["role"] == "user"]
    note = next(t for t in texts if "undid the file changes" in t)
    assert "make new.txt" in note and "removed new.txt" in note
    assert texts[-1] == "what is there now?"
    store = project.store()
    session = store.list_sessions(str(project.root.resolve()))[0]
    kept = [p for m in store.messages(session.id) for p in m.parts if isinstance(p, TextPart)]
    assert any(p.synthetic and "undid" in p.text for p in kept)


def test_undo_refuses_and_names_a_file_changed_since(project: Project) -> None:
    turns = [_reads("a.txt"), {"calls": [
        {"tool": "write", "args": {"path": "a.txt", "content": "by the model\n"}},
        {"tool": "write", "args": {"path": "b.txt", "content": "also\n"}},
    ]}, {"text": "Done."}]
    with project.serve(turns):
        assert project.totem("run", "--yes", "write two files").returncode == 0
    (project.root / "a.txt").write_text("edited by hand\n")
    refused = project.totem("undo")
    assert refused.returncode == 1
    assert "changed since the request: a.txt" in refused.stderr
    assert (project.root / "a.txt").read_text() == "edited by hand\n"
    assert (project.root / "b.txt").read_text() == "also\n"  # nothing was changed


def test_undo_steps_back_over_several_requests(project: Project) -> None:
    turns = [_reads("a.txt"),
             {"tool": "write", "args": {"path": "a.txt", "content": "first\n"}}, {"text": "1"},
             {"tool": "write", "args": {"path": "a.txt", "content": "second\n"}}, {"text": "2"}]
    with project.serve(turns):
        assert project.totem("run", "--yes", "first").returncode == 0
        assert project.totem("run", "--yes", "--continue", "second").returncode == 0
    assert project.totem("undo").returncode == 0
    assert (project.root / "a.txt").read_text() == "first\n"
    assert project.totem("redo").returncode == 0
    assert (project.root / "a.txt").read_text() == "second\n"
    both = project.totem("undo", "--steps", "2")
    assert both.returncode == 0, both.stderr
    assert (project.root / "a.txt").read_text() == "one\n"
    assert "“second”" in both.stdout and "“first”" in both.stdout


def test_with_snapshots_off_bash_changes_are_said_to_be_untracked_with_the_git_diff(
    project: Project,
) -> None:
    project.config_extra = "snapshots: false\n"
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=project.root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=project.root, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=project.root, check=True)
    turns = [{"calls": [
        {"tool": "bash", "args": {"command": "echo appended >> gone.txt"}},
        {"tool": "write", "args": {"path": "new.txt", "content": "x\n"}},
    ]}, {"text": "Done."}]
    with project.serve(turns):
        assert project.totem("run", "--yes", "mixed").returncode == 0
    undone = project.totem("undo")
    assert undone.returncode == 0, undone.stderr
    assert "removed new.txt" in undone.stdout
    assert "bash commands" in undone.stdout and "not tracked" in undone.stdout
    assert "git diff" in undone.stdout and "gone.txt" in undone.stdout.split("git diff")[1]
    assert (project.root / "gone.txt").read_text() == "bye\nappended\n"  # bash's stays


def test_nothing_to_undo_is_said(project: Project) -> None:
    with project.serve([{"text": "Hello."}]):
        assert project.totem("run", "hi").returncode == 0
    done = project.totem("undo")
    assert done.returncode == 1 and "Nothing to undo" in done.stderr


def test_undo_covers_what_a_sub_agent_wrote(project: Project) -> None:
    turns = [{"tool": "task", "args": {"agent": "general", "prompt": "make agent.txt"}},
             {"tool": "write", "args": {"path": "agent.txt", "content": "by the agent\n"}},
             {"text": "Made agent.txt."}, {"text": "The agent made it."}]
    with project.serve(turns):
        ran = project.totem("run", "--yes", "delegate")
    assert ran.returncode == 0, ran.stderr
    assert (project.root / "agent.txt").exists()
    undone = project.totem("undo")
    assert undone.returncode == 0, undone.stderr
    assert "removed agent.txt" in undone.stdout and not (project.root / "agent.txt").exists()


def test_a_new_request_after_an_undo_ends_what_can_be_redone(project: Project) -> None:
    turns = [{"tool": "write", "args": {"path": "x.txt", "content": "first\n"}}, {"text": "1"},
             {"tool": "write", "args": {"path": "y.txt", "content": "second\n"}}, {"text": "2"}]
    with project.serve(turns):
        assert project.totem("run", "--yes", "make x").returncode == 0
        assert project.totem("undo").returncode == 0
        assert project.totem("run", "--yes", "--continue", "make y").returncode == 0
    assert project.totem("undo").returncode == 0
    redone = project.totem("redo")
    assert redone.returncode == 0 and "“make y”" in redone.stdout
    assert (project.root / "y.txt").exists() and not (project.root / "x.txt").exists()
    again = project.totem("redo")
    assert again.returncode == 1 and "Nothing to redo" in again.stderr
