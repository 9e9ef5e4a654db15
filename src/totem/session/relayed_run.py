"""A run whose events and questions go through a `PgRelay`, so that any worker of a shared
`totem serve` can show it and answer it, not only the one that runs it.

    finished = await run_relayed(service, session, text, relay=relay, abort=abort)

Every event is published (in order, each with an id that only grows); each question the run
asks (permission, ask) waits for its reply from the relay, given on whichever worker the
person is, and the run goes on with it (an `answered` event says so, as a page shows it); a
stop asked on any worker aborts the run. A reply that is not one the question takes is a
rejection (permission) or no answer (ask), never a silent allow.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from totem.events import Event, PermissionAsked, QuestionAsked, RunFinished, event_to_dict
from totem.policy.permission import Reply

if TYPE_CHECKING:
    from totem.abort import AbortSignal
    from totem.session.service import SessionService
    from totem.store.base import SessionInfo
    from totem.store.pg_relay import PgRelay

__all__ = ["permission_reply", "reply_text", "run_relayed"]


def permission_reply(data: dict[str, Any]) -> Reply:
    """The relayed reply `{"kind": "once" | "always" | "reject", "message"?}` as a `Reply`."""
    kind = data.get("kind")
    message = str(data.get("message") or "")
    if kind == "once" or kind == "always":
        return Reply(kind, message)
    return Reply("reject", message or "rejected")


def reply_text(reply: Reply) -> str:
    """How a page shows the reply given to a permission question."""
    shown = {"once": "Allowed once", "always": "Always allowed", "reject": "Rejected"}
    return shown[reply.kind] + (f": {reply.message}" if reply.message else "")


class _Publisher:
    """Publishes the run's events one at a time, so that an `answered` event comes before
    what the run does with the answer."""

    def __init__(self, relay: PgRelay, session_id: str) -> None:
        self.relay = relay
        self.session_id = session_id
        self.lock = asyncio.Lock()
        self.open: set[str] = set()  # questions asked and not answered yet

    async def publish(self, data: dict[str, Any]) -> None:
        async with self.lock:
            await self.relay.publish(self.session_id, data)

    async def close_questions(self) -> None:
        """The run ends without answers to these: no card waits on."""
        async with self.lock:
            for request_id in sorted(self.open):
                await self.relay.publish(self.session_id, {
                    "type": "answered", "request_id": request_id, "answer": None})
            self.open.clear()

    async def answered(self, request_id: str, give: Callable[[], bool], shown: str | None) -> None:
        async with self.lock:
            if give():
                self.open.discard(request_id)
                await self.relay.publish(self.session_id, {
                    "type": "answered", "request_id": request_id, "answer": shown})


async def _relay_permission(service: SessionService, out: _Publisher, request_id: str) -> None:
    reply = permission_reply(await out.relay.wait_reply(request_id))
    await out.answered(request_id, lambda: service.reply(request_id, reply), reply_text(reply))


async def _relay_answer(service: SessionService, out: _Publisher, request_id: str) -> None:
    answer = (await out.relay.wait_reply(request_id)).get("answer")
    given = answer if isinstance(answer, str) else None
    await out.answered(request_id, lambda: service.answer(request_id, given), given)


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
                      shape: Callable[[Event], dict[str, Any]] = event_to_dict,
                      **options: Any) -> RunFinished | None:
    """Run `text` in the session here, publishing each event (as `shape` writes it, with an
    `answered` event when a question's reply is taken); the run's last event."""
    out = _Publisher(relay, session.id)
    waiting: set[asyncio.Task[None]] = set()
    finished: RunFinished | None = None
    stop = await _listen_for_stop(relay, session.id, abort)
    waiting.add(stop)
    try:
        async for event in service.run(session, text, abort=abort, **options):
            if isinstance(event, RunFinished):
                await out.close_questions()  # before the end: the session is free after it
            await out.publish(shape(event))
            if isinstance(event, PermissionAsked):
                out.open.add(event.request_id)
                waiting.add(asyncio.create_task(
                    _relay_permission(service, out, event.request_id)))
            elif isinstance(event, QuestionAsked):
                out.open.add(event.request_id)
                waiting.add(asyncio.create_task(_relay_answer(service, out, event.request_id)))
            elif isinstance(event, RunFinished):
                finished = event
    finally:
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
    await out.close_questions()
    return finished
