"""A Ray cluster of two nodes on 127.0.0.1 for the tests: a head that runs no tasks and one
worker node with `cpus` CPUs, each with its own raylet, in a process of their own.

    with ray_cluster(env=env, cpus=4) as cluster:
        cluster.address                 # "127.0.0.1:PORT", for `totem batch --ray`
        cluster.task_workers("execute_task")   # pids of Ray workers running that function

Ray's own `ray start` never puts a multi-node cluster on the loopback address (it swaps
127.0.0.1 for the machine's address); `ray.cluster_utils.Cluster`, what Ray's tests use, does.
Everything the cluster starts is in one session (its own), whatever is left of it is killed
at the end.
Run as `python -m tests.support.ray_cluster CPUS`: prints the address, stops on SIGTERM.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RayCluster", "ray_cluster"]

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class RayCluster:
    address: str
    process: subprocess.Popen[str]

    def task_workers(self, function: str) -> list[int]:
        """Processes of this cluster running `function` now (Ray names them ray::FUNCTION)."""
        return [pid for pid, command in _session_processes(self.process.pid)
                if command.startswith(f"ray::{function}")]


def _session_processes(session: int) -> list[tuple[int, str]]:
    """(pid, command) of every process in the session `session` (Ray's workers are in
    process groups of their own, but stay in the session of the process that started it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")[0].decode()
            if os.getsid(int(entry.name)) == session:
                found.append((int(entry.name), command))
        except (OSError, UnicodeDecodeError):
            continue
    return found


@contextlib.contextmanager
def ray_cluster(*, env: dict[str, str], cpus: int) -> Iterator[RayCluster]:
    """Start the cluster with `env` (what its task workers see); stop it at the end."""
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
    with open(Path(temp) / "cluster.log", "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.ray_cluster", str(cpus), temp], cwd=ROOT,
            env={**env, "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])},
            stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True,
        )
    try:
        assert process.stdout is not None
        address = process.stdout.readline().strip()
        if not address:
            log = (Path(temp) / "cluster.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the Ray cluster did not start:\n{log}")
        yield RayCluster(address, process)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
        for pid, _command in _session_processes(process.pid):  # whatever of it is left
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
        import shutil

        shutil.rmtree(temp, ignore_errors=True)


def _serve(cpus: int, temp: str) -> None:
    import threading

    from ray.cluster_utils import Cluster

    # Ray writes the address of its newest cluster to /tmp/ray/ray_current_cluster, whatever
    # temp_dir says, and fails on a machine where that folder was never made
    Path("/tmp/ray").mkdir(exist_ok=True)
    cluster = Cluster(initialize_head=True, shutdown_at_exit=True, head_node_args={
        "num_cpus": 0, "node_ip_address": "127.0.0.1", "include_dashboard": False,
        "temp_dir": temp})
    cluster.add_node(num_cpus=cpus, node_ip_address="127.0.0.1")
    cluster.wait_for_nodes()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(cluster.address, flush=True)
    stop.wait()
    cluster.shutdown()


if __name__ == "__main__":
    _serve(int(sys.argv[1]), sys.argv[2])
