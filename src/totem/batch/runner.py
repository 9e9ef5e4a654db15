"""A whole batch: read the results so far, run the tasks not yet done on a pool, write each
result as it comes, show progress, and return every task's latest result (in file order)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from totem.batch.pool import Pool, PoolCalls
from totem.batch.progress import Progress
from totem.batch.results import ResultLog
from totem.batch.task import TaskOptions
from totem.batch.tasks import BatchTask

__all__ = ["run_batch"]


def run_batch(tasks: list[BatchTask], *, out: Path, pool: Pool, parallel: int,
              options: TaskOptions, stream: TextIO) -> list[dict[str, Any]]:
    """Run what `out` does not already hold as done; the latest result of every task."""
    log = ResultLog(out)
    finished = log.finished_ids()
    todo = [task for task in tasks if task.id not in finished]
    progress = Progress(total=len(tasks), skipped=len(tasks) - len(todo), stream=stream)
    if len(todo) < len(tasks):
        stream.write(f"{len(tasks) - len(todo)} of {len(tasks)} tasks already done in {out}\n")

    def record(result: dict[str, Any]) -> None:
        log.append(result)
        progress.finished(result)

    try:
        if todo:
            pool.run(todo, options, parallel=parallel,
                     calls=PoolCalls(started=lambda task: progress.started(), finished=record))
    finally:
        progress.close()
    latest = log.latest()
    return [latest[task.id] for task in tasks if task.id in latest]
