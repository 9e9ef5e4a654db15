"""Runs take turns on the event loop, one step at a time, with everything else it serves.

One step of a run (building the request, reading a fast model's answer into the store,
starting its tools) is work that awaits nothing until its tools run. asyncio runs every
callback that is ready in one pass before it polls its sockets again, so with many runs
ready at once a request to `totem serve` would wait behind one step of each of them, and a
page load needs several passes. Before each step a run asks for its turn: the loop lets
one waiting run go per pass, in the order they asked, and polls its sockets in between.
A run that is alone pays one pass of an idle loop per step.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque

__all__ = ["take_turn"]


class _Turns:
    """The runs of one event loop waiting to start their next step, first come first."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiting: deque[asyncio.Future[None]] = deque()
        self.releasing = False

    async def take(self) -> None:
        future = self.loop.create_future()
        self.waiting.append(future)
        if not self.releasing:
            self.releasing = True
            self.loop.call_soon(self._release_one)
        await future

    def _release_one(self) -> None:
        """Let the first waiting run go; the next one goes in the loop's next pass (what
        is scheduled from a callback runs only after the loop has polled again)."""
        while self.waiting:
            future = self.waiting.popleft()
            if not future.done():  # done: its run was cancelled while it waited
                future.set_result(None)
                break
        if self.waiting:
            self.loop.call_soon(self._release_one)
        else:
            self.releasing = False


_BY_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Turns] = (
    weakref.WeakKeyDictionary()
)


async def take_turn() -> None:
    """Wait until it is this run's turn to take a step on the running loop."""
    loop = asyncio.get_running_loop()
    turns = _BY_LOOP.get(loop)
    if turns is None:
        turns = _BY_LOOP[loop] = _Turns(loop)
    await turns.take()
