"""A run whose events and questions go through a `PgRelay`, so that any worker of a shared
`totem serve` can show it and answer it, not only the one that runs it.

    finished = await run_relayed(service, session, text, relay=relay, abort=abort)

Every event is published (in order, each with an id that only grows); each question the run
asks (permission, ask) waits for its reply from the relay, given on whichever worker the
person is, and the run goes on with it; a stop asked on any worker aborts the run. A reply
that is not one the question takes is a rejection (permission) or no answer (ask), never a
silent allow.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from totem.events import PermissionAsked, QuestionAsked, RunFinished, event_to_dict
from totem.policy.permission import Reply

if TYPE_CHECKING:
    from totem.abort import AbortSignal
    from totem.session.service import SessionService
    from totem.store.base import SessionInfo
    from totem.store.pg_relay import PgRelay

__all__ = ["permission_reply", "run_relayed"]


def permission_reply(data: dict[str, Any]) -> Reply:
    """The relayed reply `{"kind": "once" | "always" | "reject", "message"?}` as a `Reply`."""
    kind = data.get("kind")
    message = str(data.get("message") or "")
    if kind == "once" or kind == "always":
        return Reply(kind, message)
    return Reply("reject", message or "rejected")


async def _relay_permission(service: SessionService, relay: PgRelay, request_id: str) -> None:
    service.reply(request_id, permission_reply(await relay.wait_reply(request_id)))


async def _relay_answer(service: SessionService, relay: PgRelay, request_id: str) -> None:
    answer = (await relay.wait_reply(request_id)).get("answer")
    service.answer(request_id, answer if isinstance(answer, str) else None)


async def _listen_for_stop(relay: PgRelay, session_id: str,
                           abort: AbortSignal) -> asyncio.Task[None]:
    """A task that aborts the run when a stop is asked; returned once it listens."""
    listening = asyncio.Event()
    stop = asyncio.create_task(relay.wait_abort(session_id, listening=listening))
    ready = asyncio.create_task(listening.wait())
    await asyncio.wait([stop, ready], return_when=asyncio.FIRST_COMPLETED)
    ready.cancel()
    if stop.done():
        stop.result()  # it could not listen: the relay's error
    stop.add_done_callback(lambda task: None if task.cancelled() else abort.abort())
    return stop


async def run_relayed(service: SessionService, session: SessionInfo, text: str, *,
                      relay: PgRelay, abort: AbortSignal,
                      **options: Any) -> RunFinished | None:
    """Run `text` in the session here, publishing each event; the run's last event."""
    waiting: set[asyncio.Task[None]] = set()
    finished: RunFinished | None = None
    stop = await _listen_for_stop(relay, session.id, abort)
    waiting.add(stop)
    try:
        async for event in service.run(session, text, abort=abort, **options):
            await relay.publish(session.id, event_to_dict(event))
            if isinstance(event, PermissionAsked):
                waiting.add(asyncio.create_task(
                    _relay_permission(service, relay, event.request_id)))
            elif isinstance(event, QuestionAsked):
                waiting.add(asyncio.create_task(_relay_answer(service, relay, event.request_id)))
            elif isinstance(event, RunFinished):
                finished = event
    finally:
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
    return finished
