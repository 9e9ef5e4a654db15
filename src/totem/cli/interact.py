"""Answering the run's questions in the terminal, abortable with Ctrl-C."""

from __future__ import annotations

import asyncio

from totem.abort import AbortSignal
from totem.cli.lines import LineReader
from totem.cli.render import ask_permission, ask_question
from totem.events import Event, PermissionAsked, QuestionAsked
from totem.session.service import SessionService

__all__ = ["answer_in_terminal"]


async def answer_in_terminal(
    event: Event, *, service: SessionService, reader: LineReader, abort: AbortSignal
) -> None:
    """If `event` is a question, ask it; an abort meanwhile drops the question."""
    if isinstance(event, PermissionAsked):
        asking: asyncio.Task[object] = asyncio.create_task(ask_permission(event, reader))
    elif isinstance(event, QuestionAsked):
        asking = asyncio.create_task(ask_question(event, reader))
    else:
        return
    aborted = asyncio.create_task(abort.wait())
    done, _ = await asyncio.wait({asking, aborted}, return_when=asyncio.FIRST_COMPLETED)
    aborted.cancel()
    if asking not in done:
        asking.cancel()
        print("\n(stopped)", flush=True)
        return
    answer = asking.result()
    if isinstance(event, PermissionAsked):
        from totem.policy.permission import Reply

        assert isinstance(answer, Reply)
        service.reply(event.request_id, answer)
    else:
        assert answer is None or isinstance(answer, str)
        service.answer(event.request_id, answer)
