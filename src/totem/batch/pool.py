"""What the batch runner needs of a pool: start tasks, at most `parallel` at once, and say
when each starts and what each gave. Two pools: here (`LocalPool`) and on Ray (`RayPool`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from totem.batch.task import TaskOptions
from totem.batch.tasks import BatchTask

__all__ = ["Pool", "PoolCalls"]


@dataclass(frozen=True, slots=True)
class PoolCalls:
    started: Callable[[BatchTask], None]
    finished: Callable[[dict[str, Any]], None]


class Pool(Protocol):
    def run(self, tasks: list[BatchTask], options: TaskOptions, *, parallel: int,
            calls: PoolCalls) -> None:
        """Run every task; report each result through `calls` as it comes."""
        ...
