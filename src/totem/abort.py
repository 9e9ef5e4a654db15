"""Abort as a state: one signal per run, checked before each model call and each tool run."""

from __future__ import annotations

import asyncio

__all__ = ["AbortSignal", "Aborted"]


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
