"""`totem batch` throughput: tasks per minute at --parallel 1, 2, 4, on Ray (local) and with
--local, and the overhead per task against a bare `totem run`.

    .venv/bin/python bench/batch.py [--tasks 12] [--runs 3] [--pause 0]

Each run makes TASKS small git repositories and a task file; the fake OpenAI-compatible server
(zero latency) plays each task's own conversation: read greeting.py, edit it, answer (with
`--pause S`, a `sleep S` step as well, standing for a model that takes time). Printed, medians
over the runs:

    bare totem run        one `totem run --yes --format json` in a folder, per task
    in-task overhead      a batch task's own time (clone, run, diff) minus the bare run
    batch wall            the whole `totem batch` (pool or Ray start included)
    tasks per minute      TASKS / batch wall
    overhead per task     batch wall / TASKS at --parallel 1, minus the bare run
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from totem.testing.fake_server import FakeOpenAIServer

ORIGINAL = 'NAME = "world"\n\n\ndef greet() -> str:\n    return f"hello {NAME}"\n'
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]


def make_repos(base: Path, count: int) -> list[Path]:
    repos = []
    for number in range(count):
        repo = base / f"repo{number:02d}"
        repo.mkdir(parents=True)
        (repo / "greeting.py").write_text(ORIGINAL)
        subprocess.run([*GIT, "init", "-q"], cwd=repo, check=True)
        subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
        subprocess.run([*GIT, "commit", "-qm", "start"], cwd=repo, check=True)
        repos.append(repo)
    return repos


def conversations(count: int, pause: float) -> dict[str, list[dict[str, Any]]]:
    scripts = {}
    for n in range(count):
        steps: list[dict[str, Any]] = [
            {"tool": "read", "args": {"path": "greeting.py"}},
            {"tool": "edit", "args": {"path": "greeting.py", "old_string": 'NAME = "world"',
                                      "new_string": f'NAME = "task{n:02d}"'}}]
        if pause:
            steps.append({"tool": "bash", "args": {"command": f"sleep {pause:g}"}})
        steps.append({"text": f"Renamed the greeting to task{n:02d}."})
        scripts[f"[task-{n:02d}]"] = steps
    return scripts


def environment(base: Path, url: str) -> dict[str, str]:
    config = base / "totem.yaml"
    config.write_text(f"model: fake/m\nproviders:\n  fake: {{kind: openai, base_url: '{url}'}}\n"
                      "knowledge: {totaljs: never}\n")
    return {**os.environ, "XDG_DATA_HOME": str(base / "data"), "TOTEM_CONFIG": str(config),
            "XDG_CONFIG_HOME": str(base / "config")}


def bare_runs(base: Path, repos: list[Path], env: dict[str, str]) -> list[float]:
    """Seconds of a plain `totem run` for each task, one after another, in the repo itself."""
    times = []
    for n, repo in enumerate(repos):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "totem", "run", "--yes", "--format", "json",
                        f"[task-{n:02d}] Rename the greeting."], cwd=repo, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
        subprocess.run([*GIT, "checkout", "-q", "."], cwd=repo, check=True)
    return times


def one_batch(base: Path, repos: list[Path], env: dict[str, str], *, parallel: int,
              local: bool) -> dict[str, float]:
    tasks = base / f"tasks-{parallel}-{local}.jsonl"
    tasks.write_text("".join(
        json.dumps({"id": f"t{n:02d}", "repo": str(repo),
                    "prompt": f"[task-{n:02d}] Rename the greeting."}) + "\n"
        for n, repo in enumerate(repos)))
    command = [sys.executable, "-m", "totem", "batch", str(tasks), "--parallel", str(parallel)]
    start = time.perf_counter()
    done = subprocess.run([*command, *(["--local"] if local else [])], env=env, cwd=base,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    results = [json.loads(line) for line in
               tasks.with_name(f"{tasks.stem}.results.jsonl").read_text().splitlines()]
    ok = sum(1 for r in results if r["status"] == "ok")
    if done.returncode != 0 or ok != len(repos):
        raise SystemExit(f"batch failed ({ok}/{len(repos)} ok):\n{done.stderr[-2000:]}")
    return {"wall": wall, "task": statistics.median(r["wall_s"] for r in results)}


def one_run(count: int, pause: float, parallels: list[int]) -> dict[str, float]:
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repos = make_repos(base / "repos", count)
        server = FakeOpenAIServer(conversations=conversations(count, pause), models=["m"])
        with server.in_thread() as url:
            env = environment(base, url)
            figures["bare"] = statistics.median(bare_runs(base, repos, env))
            for local in (False, True):
                for parallel in parallels:
                    found = one_batch(base, repos, env, parallel=parallel, local=local)
                    name = f"{'local' if local else 'ray'}-{parallel}"
                    figures[f"{name}-wall"] = found["wall"]
                    figures[f"{name}-task"] = found["task"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pause", type=float, default=0.0)
    parser.add_argument("--parallel", default="1,2,4")
    args = parser.parse_args()
    parallels = [int(p) for p in args.parallel.split(",")]
    runs = [one_run(args.tasks, args.pause, parallels) for _ in range(args.runs)]

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    bare = med("bare")
    print(f"totem batch bench: {args.tasks} tasks (read, edit, answer"
          f"{f', sleep {args.pause:g} s' if args.pause else ''}), zero-latency fake server, "
          f"median of {args.runs} runs, {os.cpu_count()} CPUs")
    print(f"  bare totem run, per task                {bare:6.2f} s")
    for pool in ("ray", "local"):
        for parallel in parallels:
            wall, task = med(f"{pool}-{parallel}-wall"), med(f"{pool}-{parallel}-task")
            print(f"  {pool:5} --parallel {parallel}: batch wall {wall:6.2f} s, "
                  f"{args.tasks * 60 / wall:6.1f} tasks/min, in-task overhead "
                  f"{task - bare:+.2f} s")
        first = med(f"{pool}-{parallels[0]}-wall") / args.tasks
        print(f"  {pool:5} overhead per task at --parallel {parallels[0]} "
              f"(start included): {first - bare:+.2f} s")


if __name__ == "__main__":
    main()
