"""`totem batch` on Ray (`pip install 'totem[batch]'`): on this machine (`ray.init()`), or on
a cluster (`--ray ADDRESS`).

Each task is a Ray task that Ray starts again when its worker is lost (a killed process, a
node gone), up to `retries` times; a task whose own run fails is a result, not an exception,
so it is never retried. At most `parallel` tasks are in flight. Ray is imported only here,
and only when a batch runs on it.
"""

from __future__ import annotations

from typing import Any

from totem.batch.pool import PoolCalls
from totem.batch.task import TaskOptions, execute_task, failed_result
from totem.batch.tasks import BatchTask

__all__ = ["RayPool", "RayUnreachable", "check_reachable"]


class RayUnreachable(Exception):
    """Nothing answers at the cluster's address (Ray itself would wait for it forever)."""


def check_reachable(address: str, *, timeout: float = 10.0) -> None:
    """Raise RayUnreachable when a `HOST:PORT` address (or `ray://HOST:PORT`) takes no
    connection; other forms (`auto`) are left to Ray."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise RayUnreachable(
            f"the Ray cluster at {address} cannot be reached: {exc.strerror or exc}") from None


class RayPool:
    """Tasks as Ray tasks, at most `parallel` in flight, each retried on a lost worker."""

    def __init__(self, *, address: str | None, retries: int = 3) -> None:
        self.address = address
        self.retries = retries

    def run(self, tasks: list[BatchTask], options: TaskOptions, *, parallel: int,
            calls: PoolCalls) -> None:
        import logging

        import ray

        if self.address:
            check_reachable(self.address)
            ray.init(address=self.address, log_to_driver=False, logging_level=logging.ERROR)
        else:
            ray.init(num_cpus=parallel, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.ERROR)
        try:
            self._run(ray, tasks, options, parallel=parallel, calls=calls)
        finally:
            ray.shutdown()

    def _run(self, ray: Any, tasks: list[BatchTask], options: TaskOptions, *, parallel: int,
             calls: PoolCalls) -> None:
        remote = ray.remote(num_cpus=1, max_retries=self.retries,
                            retry_exceptions=False)(execute_task)
        queue = list(tasks)
        pending: dict[Any, BatchTask] = {}
        while queue or pending:
            while queue and len(pending) < parallel:
                task = queue.pop(0)
                pending[remote.remote(task.to_dict(), options)] = task
                calls.started(task)
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                task = pending.pop(ref)
                try:
                    result: dict[str, Any] = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    said = str(exc).strip().splitlines()
                    result = failed_result(task.id, f"lost on Ray: {said[0] if said else exc}")
                calls.finished(result)
