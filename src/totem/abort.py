"""Abort as a state: one signal per run, checked before each model call and each tool run."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["AbortSignal", "Aborted"]

T = TypeVar("T")


class Aborted(Exception):
    """Raised where a run notices that it was aborted."""


class AbortSignal:
    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.reason = ""

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    def abort(self, reason: str = "aborted by user") -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    async def wait(self) -> None:
        await self._event.wait()

    def check(self) -> None:
        if self._event.is_set():
            raise Aborted(self.reason)

    async def until(self, work: Awaitable[T]) -> T:
        """The result of `work`, or Aborted as soon as this signal fires (`work` is cancelled)."""
        task = asyncio.ensure_future(work)
        aborted = asyncio.ensure_future(self.wait())
        try:
            await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
            if not task.done():
                task.cancel()
                await asyncio.wait({task})
        if task.cancelled():
            raise Aborted(self.reason or "aborted")
        return task.result()
