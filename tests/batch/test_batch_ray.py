"""`totem batch` on a real Ray cluster: a head and one worker node started by the test on
127.0.0.1, twenty generated repositories, four tasks at a time. A Ray worker killed in the
middle of a task loses nothing (Ray runs the task again); a second run skips what is done.

Marked `ray` (`pytest -m ray` runs only these); scripts/test.sh installs the extra.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.batch_repos import (
    batch_env,
    check_result,
    conversations,
    make_repos,
    mark,
    run_batch,
    task_id,
    untouched,
    write_tasks,
)
from tests.support.ports import closed_port
from tests.support.ray_cluster import RayCluster, ray_cluster
from tests.support.required import unavailable
from totem.testing.fake_server import FakeOpenAIServer

pytestmark = pytest.mark.ray

COUNT = 20


def starts(server: FakeOpenAIServer, number: int) -> int:
    """How many times task `number`'s conversation was started from its beginning."""
    return sum(1 for r in server.requests if r.path.endswith("/chat/completions")
               and mark(number) in json.dumps(r.body["messages"])
               and not any(m["role"] == "assistant" for m in r.body["messages"]))


def parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def sleeping() -> list[int]:
    """Processes running `sleep` (the bash tool puts its commands in sessions of their own)."""
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and b"sleep" in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


def kill_a_worker_mid_task(cluster: RayCluster, deadline: float) -> int:
    """SIGKILL a Ray worker whose task's run is half way (in its `sleep` step); its pid."""
    while time.monotonic() < deadline:
        workers = set(cluster.task_workers("execute_task"))
        for pid in sleeping():
            with contextlib.suppress(OSError, ValueError, IndexError):
                ancestor = pid
                while ancestor > 1 and ancestor not in workers:
                    ancestor = parent(ancestor)
                if ancestor in workers:
                    os.kill(ancestor, signal.SIGKILL)
                    return ancestor
        time.sleep(0.05)
    raise AssertionError("no Ray worker was ever seen half way through a task")


def test_twenty_tasks_on_a_ray_cluster_survive_a_killed_worker(tmp_path: Path) -> None:
    if importlib.util.find_spec("ray") is None:
        unavailable("ray is not installed (pip install 'totem[batch]')")
    repos = make_repos(tmp_path / "repos", count=COUNT)
    tasks = tmp_path / "tasks.jsonl"
    write_tasks(tasks, repos)
    server = FakeOpenAIServer(conversations=conversations(COUNT, pause=1.5), models=["m"])
    with server.in_thread() as url:
        # Ray keeps to the loopback address only when told its cluster is a single machine's
        env = batch_env(tmp_path, url, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
        with ray_cluster(env=env, cpus=4) as cluster:
            command = [sys.executable, "-m", "totem", "batch", str(tasks), "--ray",
                       cluster.address, "--parallel", "4"]
            batch = subprocess.Popen(command, cwd=tmp_path, env=env, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                killed = kill_a_worker_mid_task(cluster, time.monotonic() + 120)
                out, err = batch.communicate(timeout=600)
            finally:
                if batch.poll() is None:
                    batch.kill()
                    batch.communicate()
            assert batch.returncode == 0, err[-3000:]
            results = [json.loads(line) for line in
                       (tmp_path / "tasks.results.jsonl").read_text().splitlines()]
            assert sorted(r["id"] for r in results) == [task_id(n) for n in range(COUNT)]
            by_id = {r["id"]: r for r in results}
            for number, repo in enumerate(repos):
                check_result(by_id[task_id(number)], number)
                assert untouched(repo)
            assert f"{COUNT}/{COUNT} ok, 0 failed" in out
            retried = [n for n in range(COUNT) if starts(server, n) > 1]
            assert len(retried) >= 1, f"the task of worker {killed} was not run again"

            before = len(server.requests)
            again = subprocess.run(command, cwd=tmp_path, env=env, text=True,
                                   capture_output=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"{COUNT} of {COUNT} tasks already done" in again.stderr
    assert len(server.requests) == before  # nothing ran again
    assert len((tmp_path / "tasks.results.jsonl").read_text().splitlines()) == COUNT


def test_an_address_where_no_cluster_answers_is_a_clear_error(tmp_path: Path) -> None:
    if importlib.util.find_spec("ray") is None:
        unavailable("ray is not installed (pip install 'totem[batch]')")
    [repo] = make_repos(tmp_path / "repos", count=1)
    tasks = tmp_path / "tasks.jsonl"
    write_tasks(tasks, [repo])
    address = f"127.0.0.1:{closed_port()}"
    done = run_batch([str(tasks), "--ray", address], env=batch_env(tmp_path, "http://x/v1"),
                     cwd=tmp_path, timeout=120)
    assert done.returncode == 1
    assert f"totem: the Ray cluster at {address} cannot be reached" in done.stderr
    assert "Traceback" not in done.stderr
