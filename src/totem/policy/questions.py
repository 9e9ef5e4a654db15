"""Questions for the person: the ask tool and MCP elicitation go through here.

Like a permission question, a question is an event on the session; the run waits until a
client answers. With nobody to ask (a headless run) the answer is None, and the caller tells
the model "no answer available" instead of waiting forever.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from totem.events import Event, QuestionAsked
from totem.messages import new_id

__all__ = ["QuestionService"]


class QuestionService:
    def __init__(self, *, interactive: bool, emit: Callable[[Event], None] | None = None) -> None:
        self.interactive = interactive
        self.emit = emit
        self._pending: dict[str, asyncio.Future[str | None]] = {}

    async def ask(
        self,
        question: str,
        options: list[str] | None = None,
        *,
        allow_free: bool = True,
        emit: Callable[[Event], None] | None = None,
    ) -> str | None:
        """The person's answer (one of the options, or free text); None when nobody can.
        The question goes to `emit` (the run's event sink), or to the service's own."""
        sink = emit if emit is not None else self.emit
        if not self.interactive or sink is None:
            return None
        request_id = new_id("ask")
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        sink(QuestionAsked(request_id, question, list(options or []), allow_free))
        try:
            return await future
        finally:
            self._pending.pop(request_id, None)

    def reply(self, request_id: str, answer: str | None) -> bool:
        future = self._pending.get(request_id)
        if future is None or future.done():
            return False
        future.set_result(answer)
        return True

    def pending(self) -> list[str]:
        return list(self._pending)
