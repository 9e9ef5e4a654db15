"""The snapshot store survives a `totem run` killed (SIGKILL, with its git) in the middle of
a snapshot: the next run works and is undone, and so is the request made before the kill."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.support.headless import TOTEM, Project
from totem.snapshots.worktree import store_folder

FILES = 30_000  # enough that the snapshot after them takes a while to hash


def _bash(command: str) -> dict[str, object]:
    return {"tool": "bash", "args": {"command": command}}


def _kill_in_a_snapshot(project: Project, lock: Path) -> None:
    """`totem run` whose first call's snapshot is under way, killed with its git."""
    running = subprocess.Popen(
        [*TOTEM, "run", "--yes", "--continue", "second"], cwd=project.root, env=project.env,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    try:
        while not lock.exists():
            assert running.poll() is None, "the run ended before its snapshot was seen"
            assert time.monotonic() < deadline, "no snapshot under way within two minutes"
            time.sleep(0.002)
    finally:
        os.killpg(running.pid, signal.SIGKILL)
        running.wait()
    assert lock.exists()  # git's lock, left behind: killed in the middle


def test_a_run_killed_in_a_snapshot_leaves_a_store_that_still_undoes(tmp_path: Path) -> None:
    project = Project(tmp_path)
    root = project.root
    (root / "keep.txt").write_bytes(b"precious\x00bytes\n")
    turns = [_bash("rm keep.txt"), {"text": "Removed."},
             _bash("echo two > two.txt"),  # the killed run's: never made
             _bash("echo three > three.txt"), {"text": "Made."}]
    with project.serve(turns):
        assert project.totem("run", "--yes", "first").returncode == 0
        assert not (root / "keep.txt").exists()
        many = root / "many"
        for index in range(FILES):
            if index % 1000 == 0:
                (many / str(index // 1000)).mkdir(parents=True)
            (many / str(index // 1000) / f"{index}.txt").write_text(f"{index}\n")
        store = store_folder(tmp_path / "data" / "totem", root)
        _kill_in_a_snapshot(project, store / "index.lock")
        third = project.totem("run", "--yes", "--continue", "third", timeout=300)
        assert third.returncode == 0, third.stdout + third.stderr
    assert (root / "three.txt").read_text() == "three\n" and not (root / "two.txt").exists()
    undone = project.totem("undo")
    assert undone.returncode == 0, undone.stderr
    assert "“third”" in undone.stdout and not (root / "three.txt").exists()
    earlier = project.totem("undo")
    assert earlier.returncode == 0, earlier.stderr
    assert "“first”" in earlier.stdout
    assert (root / "keep.txt").read_bytes() == b"precious\x00bytes\n"
    assert (root / "many" / "29" / "29999.txt").exists()  # the person's files stay
