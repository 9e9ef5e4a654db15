"""A session's runs when several `totem serve` workers share one PostgreSQL store: the hub
of that case, with the same calls as `Hub` (hub.py) but its state in the database.

- A run started here holds the session (`RunClaims.claim`: one run per session, whichever
  worker is asked) and goes through `run_relayed`: each event is published with an id that
  only grows, so every worker's pages stream it from the relay (`PgRelay.follow`), resuming
  from `Last-Event-ID` on any worker.
- A page's reply to a question, or its stop, is handed to the relay and reaches the worker
  that runs the session, this one or another.
- Where the live run starts and how many stored messages came before it are read from the
  run's row, so a page opened on any worker shows the store up to the run, then the run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from totem.abort import AbortSignal
from totem.events import Event
from totem.policy.modes import SessionMode
from totem.policy.permission import Reply
from totem.server.hub import (
    HEARTBEAT,
    Costing,
    Position,
    Refused,
    ServiceFactory,
    close_run,
    event_data,
    sse,
)
from totem.server.sessions import count_messages
from totem.settings.config import ConfigError

if TYPE_CHECKING:
    from totem.session.service import SessionService
    from totem.store.pg_relay import PgRelay
    from totem.store.pg_runs import RunClaims, RunHold

__all__ = ["RelayedHub"]

log = logging.getLogger("totem.server")


class RelayedHub:
    def __init__(
        self, session_id: str, *, relay: PgRelay, claims: RunClaims,
        make_service: ServiceFactory, generation: int, costing: Costing | None = None,
    ) -> None:
        self.session_id = session_id
        self.relay = relay
        self.claims = claims
        self.make_service = make_service
        self.generation = generation
        self.costing = costing
        self.service: SessionService | None = None
        self.abort: AbortSignal | None = None
        self.task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        """Whether a run of the session goes on in this worker."""
        return self.task is not None and not self.task.done()

    async def busy(self) -> bool:
        """Whether a run of the session goes on, in any worker."""
        return self.running or await self.claims.current(self.session_id) is not None

    async def position(self) -> Position:
        run = await self.claims.current(self.session_id)
        last = await self.relay.last_id(self.session_id)
        if run is None:
            return Position(None, None, last)
        return Position({"after": run.start_id, "model": run.model}, run.cut, last)

    # the stream ---------------------------------------------------------------------------

    async def watch(
        self, after: int | None, *, until: asyncio.Event | None = None
    ) -> AsyncGenerator[bytes, None]:
        """The session's events after `after` (None: from now), then each new one as it
        comes, from whichever worker runs it, until `until` is set."""
        if after is None:
            after = await self.relay.last_id(self.session_id)
        queue: asyncio.Queue[tuple[int, dict[str, Any]]] = asyncio.Queue()
        pump = asyncio.create_task(self._pump(after, queue))
        stopping = asyncio.create_task((until or asyncio.Event()).wait())
        try:
            yield b"retry: 1000\n\n"
            while not stopping.done():
                getting = asyncio.create_task(queue.get())
                await asyncio.wait([getting, stopping, pump], timeout=HEARTBEAT,
                                   return_when=asyncio.FIRST_COMPLETED)
                if not getting.done():
                    getting.cancel()
                    if pump.done():
                        return  # the database is gone: the page reconnects and resumes
                    if not stopping.done():
                        yield b": ping\n\n"
                    continue
                batch = [getting.result()]
                while not queue.empty():
                    batch.append(queue.get_nowait())
                yield b"".join(sse(event_id, data) for event_id, data in batch)
        finally:
            for task in (pump, stopping):
                task.cancel()
            await asyncio.gather(pump, stopping, return_exceptions=True)

    async def _pump(self, after: int,
                    queue: asyncio.Queue[tuple[int, dict[str, Any]]]) -> None:
        async for item in self.relay.follow(self.session_id, after=after):
            queue.put_nowait(item)

    def wake(self) -> None:
        """Nothing to wake: a stream waits on `until` itself."""

    # runs ---------------------------------------------------------------------------------

    def _ready_service(self, generation: int) -> SessionService:
        if self.service is None or self.generation != generation:
            if self.service is not None:  # the settings changed: a new service reads them
                asyncio.get_running_loop().create_task(self.service.aclose())
            self.service = self.make_service()
            self.generation = generation
        return self.service

    async def launch(self, text: str, *, model: str | None, agent: str | None,
                     generation: int, mode: SessionMode | None = None,
                     plan: list[str] | None = None) -> int | Refused:
        """Start a run here unless one goes on in any worker; the id its events come after."""
        if self.running:
            return Refused(409, "a run is in progress in this session")
        try:
            service = self._ready_service(generation)
        except ConfigError as exc:
            return Refused(400, str(exc))
        hold = await self.claims.claim(self.session_id)
        if hold is None:
            return Refused(409, "a run is in progress in this session")
        try:
            start = await self.relay.last_id(self.session_id)
            await hold.announce(start_id=start, cut=count_messages(service.store, self.session_id),
                                model=model or "")
            await self.relay.publish(self.session_id, {
                "type": "user", "text": text, "model": model or "", "agent": agent or ""})
        except BaseException:
            await hold.release()
            raise
        self.abort = AbortSignal()
        if plan:  # an approved plan: carried out in the mode chosen (default: normal)
            from totem.session.plan import approved_text

            text, mode = approved_text(plan), mode or "default"
        if mode is not None:
            service.set_mode(self.session_id, mode)
        self.task = asyncio.get_running_loop().create_task(self._drive(
            service, text, hold=hold, model=model, agent=agent, abort=self.abort))
        return start

    async def _drive(self, service: SessionService, text: str, *, hold: RunHold,
                     model: str | None, agent: str | None, abort: AbortSignal) -> None:
        try:
            end = await self._outcome(service, text, model=model, agent=agent, abort=abort)
            if end is not None:
                await self.relay.publish(self.session_id, end)
        except Exception:  # the database went away: the run's row goes with the connection
            log.exception("publishing the end of a run failed")
        finally:
            await hold.release()

    async def _outcome(self, service: SessionService, text: str, *, model: str | None,
                       agent: str | None, abort: AbortSignal) -> dict[str, Any] | None:
        """Run it; the closing event still to publish, if the run did not give its own."""
        from totem.session.relayed_run import run_relayed

        try:
            session = service.open(session_id=self.session_id)
            if text == "/compact":
                return await self._compact(service, session, abort=abort)
            label = service.model_label(session, model)

            def shape(event: Event) -> dict[str, Any]:
                return event_data(event, label, self.costing)

            finished = await run_relayed(service, session, text, relay=self.relay, abort=abort,
                                         shape=shape, model=model, agent_name=agent)
        except ConfigError as exc:
            await self.relay.publish(self.session_id,
                                     {"type": "notice", "text": str(exc), "level": "error"})
            return _finished("error", str(exc))
        except Exception as exc:  # shown to the person; the server goes on
            log.exception("run failed")
            return _finished("error", f"The run failed: {type(exc).__name__}: {exc}")
        return None if finished is not None else _finished("aborted", abort.reason or "stopped")

    async def _compact(self, service: SessionService, session: Any, *,
                       abort: AbortSignal) -> dict[str, Any]:
        try:
            for event in await service.compact(session, abort=abort):
                await self.relay.publish(self.session_id, event_data(event, "", self.costing))
        except Exception as exc:  # shown to the person; the server goes on
            log.exception("compaction failed")
            return _finished("error", f"Compacting failed: {type(exc).__name__}: {exc}")
        return _finished("finished", "")

    # answers ------------------------------------------------------------------------------

    async def _waiting(self, request_id: str, kind: str) -> bool:
        """Whether the session's live run asked `request_id` (a `kind` question) and it has
        no answer yet."""
        run = await self.claims.current(self.session_id)
        if run is None:
            return False
        asked = answered = False
        for _, event in await self.relay.events(self.session_id, after=run.start_id):
            if event.get("request_id") == request_id:
                asked = asked or event["type"] == kind
                answered = answered or event["type"] == "answered"
        return asked and not answered

    async def give_reply(self, request_id: str, reply: Reply) -> bool:
        """A permission question answered, for the worker whose run asked it."""
        if not await self._waiting(request_id, "permission"):
            return False
        await self.relay.answer(request_id, {"kind": reply.kind, "message": reply.message})
        return True

    async def give_answer(self, request_id: str, answer: str | None) -> bool:
        """A question of the ask tool answered (None: declined)."""
        if not await self._waiting(request_id, "question"):
            return False
        await self.relay.answer(request_id, {"answer": answer})
        return True

    async def halt(self) -> bool:
        """Stop the session's run, on whichever worker it goes on."""
        if await self.claims.current(self.session_id) is None:
            return False
        await self.relay.request_abort(self.session_id)
        return True

    async def aclose(self) -> None:
        await close_run(self.abort, self.task, self.service)
        self.service = None


def _finished(reason: str, detail: str) -> dict[str, Any]:
    return {"type": "run_finished", "reason": reason, "detail": detail, "steps": 0,
            "usage": None}
