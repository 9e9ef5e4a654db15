"""`totem batch --local`: a pool of worker processes on this machine, without Ray.

Each worker (a spawned Python, not a fork of this threaded process) takes one task at a time
and runs it in a process of its own. A worker that dies breaks the pool for every task it
held: those tasks run again in a new pool, up to `retries` times, then are recorded as failed.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from totem.batch.pool import PoolCalls
from totem.batch.task import TaskOptions, execute_task, failed_result
from totem.batch.tasks import BatchTask

__all__ = ["LocalPool"]


class LocalPool:
    """Tasks on `parallel` spawned worker processes here; lost ones run again `retries` times."""

    def __init__(self, *, retries: int = 2) -> None:
        self.retries = retries

    def run(self, tasks: list[BatchTask], options: TaskOptions, *, parallel: int,
            calls: PoolCalls) -> None:
        queue = list(tasks)
        attempts: dict[str, int] = {}
        while queue:
            lost = self._run_until_broken(queue, options, parallel=parallel, calls=calls,
                                          attempts=attempts)
            queue = []
            for task in lost:
                if attempts[task.id] > self.retries:
                    calls.finished(failed_result(
                        task.id, f"its worker process died ({attempts[task.id]} attempts)"))
                else:
                    queue.append(task)

    def _run_until_broken(self, queue: list[BatchTask], options: TaskOptions, *,
                          parallel: int, calls: PoolCalls,
                          attempts: dict[str, int]) -> list[BatchTask]:
        """Run the queue (it is emptied); the tasks a dead worker took down, with the rest."""
        context = multiprocessing.get_context("spawn")
        pending: dict[Future[dict[str, Any]], BatchTask] = {}
        with ProcessPoolExecutor(max_workers=parallel, mp_context=context) as pool:
            while queue or pending:
                while queue and len(pending) < parallel:
                    task = queue.pop(0)
                    pending[pool.submit(execute_task, task.to_dict(), options)] = task
                    attempts[task.id] = attempts.get(task.id, 0) + 1
                    if attempts[task.id] == 1:
                        calls.started(task)
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    try:
                        result = future.result()
                    except BrokenProcessPool:
                        lost = [*pending.values(), *queue]
                        queue.clear()
                        return lost
                    calls.finished(result)
                    del pending[future]
        return []
