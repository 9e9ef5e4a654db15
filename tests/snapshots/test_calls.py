"""The snapshots around calls: what a command changed is recorded with its diff; what the
person does between two calls is not the request's; a file tool's change is recorded with
the content after it; nothing fails when git cannot be used."""

from __future__ import annotations

import subprocess
from pathlib import Path

from totem.settings.snapshots import SnapshotSettings
from totem.snapshots.calls import CallSnapshots, takes_snapshots
from totem.store.base import Blob


def _watch(tmp_path: Path) -> tuple[Path, CallSnapshots]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "kept.txt").write_text("kept\n")
    return root, CallSnapshots.for_project(root, SnapshotSettings(enabled=True),
                                           tmp_path / "data")


def _command(root: Path, line: str) -> None:
    subprocess.run(line, shell=True, cwd=root, check=True)


def test_a_command_s_changes_are_recorded_and_the_person_s_between_calls_are_not(
    tmp_path: Path,
) -> None:
    root, watch = _watch(tmp_path)
    mark = watch.mark()
    taken = watch.before("ses_1")
    assert taken is not None
    _command(root, "echo one > one.txt && rm kept.txt")
    diff = watch.after(taken)
    assert "+one" in diff and "-kept" in diff
    (root / "hand.txt").write_text("the person's\n")  # between two calls
    second = watch.before("ses_1")
    assert second is not None
    _command(root, "echo two > two.txt")
    watch.after(second)
    changes = {Path(c.path).name: c for c in watch.since(mark)}
    assert set(changes) == {"one.txt", "kept.txt", "two.txt"}
    assert changes["kept.txt"].after is None and isinstance(changes["kept.txt"].before, Blob)
    assert all(c.session_id == "ses_1" for c in changes.values())
    assert len(watch.trees(changes.values())) == 4  # before and after each call: all kept


def test_a_file_tool_s_change_is_kept_and_its_ignored_file_followed_from_then_on(
    tmp_path: Path,
) -> None:
    root, watch = _watch(tmp_path)
    (root / ".gitignore").write_text(".env\n")
    (root / ".env").write_text("A=1\n")
    mark = watch.mark()
    (root / ".env").write_text("A=2\n")  # what a file tool did, with its snapshot
    watch.files_changed("ses_1", {root / ".env": b"A=1\n"})
    taken = watch.before("ses_1")
    assert taken is not None
    _command(root, "echo A=3 > .env")
    watch.after(taken)
    states = [(c.before, c.after) for c in watch.since(mark)]
    assert states[0] == (b"A=1\n", b"A=2\n")
    assert isinstance(states[1][0], Blob) and isinstance(states[1][1], Blob)


def test_without_a_usable_store_the_call_runs_and_a_warning_says_so(tmp_path: Path) -> None:
    root, watch = _watch(tmp_path)
    blocker = tmp_path / "data" / "snapshots"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("a file where the store's folder should be\n")
    assert watch.before("ses_1") is None
    assert watch.warnings and "cannot be undone" in watch.warnings[0]


def test_which_calls_run_between_snapshots() -> None:
    assert takes_snapshots("bash", read_only=False, parallel=False)
    assert takes_snapshots("github__create_file", read_only=False, parallel=False)
    assert not takes_snapshots("read", read_only=True, parallel=False)
    assert not takes_snapshots("edit", read_only=False, parallel=False)  # its own snapshot
    assert not takes_snapshots("task", read_only=False, parallel=True)
