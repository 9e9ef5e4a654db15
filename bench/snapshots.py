"""What the work tree's snapshots cost (totem.snapshots): time and disk.

    .venv/bin/python bench/snapshots.py [--files 10000] [--runs 5] [--requests 100]

In a fresh folder of `--files` files (text, some binary, in 100 folders; no git repository)
it prints the medians over `--runs` of:

    first snapshot           a new store: every file hashed
    later snapshot           the same tree again: git's stat cache, nothing hashed
    after 10 files changed   what a typical command leaves
    bash call, added         a bash call (`true`) with its two snapshots and its diff,
                             against the same call without, alternated
    disk after N requests    the store after --requests requests that each change a few
                             files through a command (kept and pruned as totem does)

and then the scripted 10-turn task of bench/turns.py (two bash calls) run by `totem run`
with snapshots on and off, alternated: the overhead per turn and the wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from totem.abort import AbortSignal
from totem.policy.permission import PermissionService
from totem.settings.snapshots import SnapshotSettings
from totem.snapshots.calls import CallSnapshots
from totem.snapshots.prune import maybe_prune
from totem.snapshots.worktree import WorkTreeStore, store_folder
from totem.tools.base import ToolContext, ToolSettings, parse_arguments
from totem.tools.bash import Bash

HERE = Path(__file__).resolve().parent


def make_tree(root: Path, files: int) -> None:
    for index in range(files):
        folder = root / f"pkg{index % 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        if index % 50 == 0:
            (folder / f"blob{index}.bin").write_bytes(os.urandom(4096))
        else:
            (folder / f"mod{index}.py").write_text(
                f"def f{index}(x):\n    return x + {index}\n" * 5)


def text_file(root: Path, number: int) -> Path:
    """The path make_tree gave text file `number` (every 50th is binary: the next one)."""
    number += number % 50 == 0
    return root / f"pkg{number % 100:02d}" / f"mod{number}.py"


def median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.1f} ms"


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def snapshot_times(base: Path, root: Path, runs: int) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {"first": [], "later": [], "changed": []}
    for run in range(runs):
        store = WorkTreeStore(root, store_folder(base / f"data-{run}", root))
        found["first"].append(timed(store.snapshot))
        found["later"].append(statistics.median(timed(store.snapshot) for _ in range(3)))
        for index in range(10):
            path = text_file(root, 101 + index)
            path.write_text(path.read_text() + f"# run {run}\n")
        found["changed"].append(timed(store.snapshot))
    return found


def bash_times(base: Path, root: Path, runs: int) -> tuple[list[float], list[float]]:
    """A bash call without snapshots and with them, alternated."""
    watch = CallSnapshots.for_project(root, SnapshotSettings(enabled=True), base / "data-bash")
    watch.store.snapshot()  # the project's first snapshot is made once, not per call
    permission = PermissionService(rules=[], mode="yes", project=str(root))
    tool = Bash()
    args = parse_arguments(tool, {"command": "true"})

    def call() -> None:
        ctx = ToolContext(root=root, session_id="bench", call_id="bench", abort=AbortSignal(),
                          permission=permission, settings=ToolSettings(), tool_name="bash")
        asyncio.run(tool.run(args, ctx))

    def watched() -> None:
        taken = watch.before("bench")
        assert taken is not None
        call()
        watch.after(taken)

    plain: list[float] = []
    with_snapshots: list[float] = []
    for _ in range(runs):
        plain.append(timed(call))
        with_snapshots.append(timed(watched))
    return plain, with_snapshots


def disk_after(base: Path, root: Path, requests: int) -> tuple[int, int]:
    """Bytes of the store after `requests` requests, and of the tree itself."""
    settings = SnapshotSettings(enabled=True)
    watch = CallSnapshots.for_project(root, settings, base / "data-disk")
    for index in range(requests):
        mark = watch.mark()
        taken = watch.before("bench")
        assert taken is not None
        edited = text_file(root, 200 + index % 100).relative_to(root)
        command = f"sed -i 's/return x/return -x/' {edited} && echo {index} > out{index % 7}.txt"
        subprocess.run(command, shell=True, cwd=root, check=True)
        watch.after(taken)
        watch.store.keep(f"msg_{index}", watch.trees(watch.since(mark)))
        maybe_prune(watch.store, settings)
    return _size(watch.store.folder), _size(root)


def _size(folder: Path) -> int:
    return sum(p.lstat().st_blocks * 512 for p in folder.rglob("*"))


def task_times(runs: int) -> dict[str, list[float]]:
    """bench/turns.py's scripted task with snapshots on and off, alternated."""
    sys.path.insert(0, str(HERE))
    from turns import SCRIPT, make_project  # the same task, not a copy

    from totem.testing.fake_server import FakeOpenAIServer

    found: dict[str, list[float]] = {"on turn": [], "off turn": [], "on wall": [],
                                     "off wall": []}
    totem = Path(sys.executable).parent / "totem"
    for run in range(runs * 2 + 1):
        state = "on" if run % 2 else "off"
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp)
            root = make_project(base)
            server = FakeOpenAIServer(SCRIPT, models=["bench-model"])
            with server.in_thread() as url:
                config = base / "config.yaml"
                config.write_text(
                    f"model: fake/bench-model\nproviders:\n  fake: {{kind: openai, "
                    f"base_url: '{url}'}}\nsnapshots: {'true' if state == 'on' else 'false'}\n")
                env = dict(os.environ, TOTEM_CONFIG=str(config),
                           XDG_DATA_HOME=str(base / "data"), XDG_CONFIG_HOME=str(base / "cfg"),
                           XDG_CACHE_HOME=str(base.parent / "totem-bench-snapshots-cache"))
                start = time.perf_counter()
                subprocess.run([str(totem), "run", "--yes", "--format", "json", "do the task"],
                               cwd=root, env=env, check=True, capture_output=True)
                wall = time.perf_counter() - start
                chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
            if run == 0:
                continue  # warm-up: fills the caches
            gaps = [chats[i].at - chats[i - 1].done for i in range(1, len(chats))]
            found[f"{state} turn"].append(statistics.median(gaps))
            found[f"{state} wall"].append(wall)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--no-task", action="store_true", help="leave out the 10-turn task")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root = base / "tree"
        make_tree(root, args.files)
        tree_size = _size(root)
        times = snapshot_times(base, root, args.runs)
        plain, watched = bash_times(base, root, args.runs * 4)
        store_bytes, _ = disk_after(base, root, args.requests)
    print(f"totem snapshots bench: {args.files:,} files ({tree_size / 2**20:.1f} MB on disk), "
          f"median of {args.runs} runs")
    print(f"  {'first snapshot':28} {median_ms(times['first']):>12}")
    print(f"  {'later snapshot (unchanged)':28} {median_ms(times['later']):>12}")
    print(f"  {'after 10 files changed':28} {median_ms(times['changed']):>12}")
    added = statistics.median(watched) - statistics.median(plain)
    print(f"  {'bash call `true`':28} {median_ms(plain):>12} without, {median_ms(watched)} "
          f"with snapshots (+{added * 1000:.1f} ms)")
    print(f"  {f'store after {args.requests} requests':28} {store_bytes / 2**20:>9.1f} MB")
    if args.no_task:
        return
    task = task_times(max(2, args.runs // 2))
    print("  bench/turns.py's 10-turn task (2 bash calls), snapshots off -> on:")
    print(f"    {'overhead per turn':26} {median_ms(task['off turn'])} -> "
          f"{median_ms(task['on turn'])}")
    print(f"    {'wall':26} {statistics.median(task['off wall']):.3f} s -> "
          f"{statistics.median(task['on wall']):.3f} s")


if __name__ == "__main__":
    main()
