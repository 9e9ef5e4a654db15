"""One hub per session the page looks at: its runs, their event log, and who watches it.

The session service does the work; a hub only keeps what a page needs to follow it:

- every event of the current run (and of the one before), each with an id that only grows,
  so a stream that reconnects with `Last-Event-ID` resumes without loss or duplicate, and a
  page reloaded mid-run rebuilds the run from its start;
- `cut`: how many stored messages came before the current run, so a snapshot is the store up
  to the run plus the run's log, never both for the same message;
- the run's abort signal and the questions it waits on.

Runs go on when every page is closed; several pages may watch one session.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import logging
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from totem.abort import AbortSignal
from totem.events import Event, StepFinished, event_to_dict
from totem.policy.modes import SessionMode
from totem.policy.permission import Reply
from totem.server.sessions import count_messages
from totem.session.relayed_run import reply_text
from totem.settings.config import ConfigError

if TYPE_CHECKING:
    from totem.session.service import SessionService

__all__ = ["Hub", "Position", "Refused", "ServiceFactory", "close_run", "event_data", "sse"]

ServiceFactory = Callable[[], "SessionService"]
Costing = Callable[[str, dict[str, Any]], float | None]
HEARTBEAT = 15.0  # seconds between keep-alive comments on an idle stream
log = logging.getLogger("totem.server")


@dataclass(frozen=True, slots=True)
class Refused:
    """A run that was not started, and why (the HTTP status and the message)."""

    status: int
    message: str


@dataclass(frozen=True, slots=True)
class Position:
    """Where a page starts: the live run (`after`: replay from there) or None, the stored
    messages before it (`cut`), and the session's latest event id."""

    live: dict[str, Any] | None
    cut: int | None
    last_id: int


def event_data(event: Event, label: str, costing: Costing | None) -> dict[str, Any]:
    """The event as a page gets it: a step's cost added when the model's price is known."""
    data = event_to_dict(event)
    if isinstance(event, StepFinished) and costing is not None:
        spent = costing(label, data["usage"])
        if spent is not None:
            data["cost"] = spent
    return data


def sse(event_id: int | None, data: dict[str, Any]) -> bytes:
    """One server-sent event: `id:` (when given) and the JSON on one `data:` line."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"{head}data: {body}\n\n".encode()


class Hub:
    def __init__(
        self, session_id: str, *, make_service: ServiceFactory, generation: int,
        costing: Costing | None = None,
    ) -> None:
        self.session_id = session_id
        self.make_service = make_service
        self.generation = generation  # the settings' generation the service was made with
        self.costing = costing
        self.service: SessionService | None = None
        self.ids: list[int] = []  # event ids of the log, increasing
        self.frames: list[bytes] = []  # each event as sent, encoded once for every watcher
        self.dropped_until = 0  # the last id no longer in the log
        self.run_start = 0  # the id before the current run's first event
        self.cut: int | None = None  # stored messages before the current run; None: no run
        self.next_id = 1
        self.abort: AbortSignal | None = None
        self.task: asyncio.Task[None] | None = None
        self.model = ""
        self.pending: dict[str, dict[str, Any]] = {}  # questions waiting, by request id
        self._changed = asyncio.Event()

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    @property
    def last_id(self) -> int:
        return self.next_id - 1

    # the log ------------------------------------------------------------------------------

    def append(self, data: dict[str, Any]) -> int:
        event_id = self.next_id
        self.next_id += 1
        self.ids.append(event_id)
        self.frames.append(sse(event_id, data))
        self._changed.set()
        self._changed = asyncio.Event()
        return event_id

    def wake(self) -> None:
        """Wake every watcher (the server stops: they see `until` set and end)."""
        self._changed.set()
        self._changed = asyncio.Event()

    def _new_log(self) -> None:
        """A run starts: keep only the previous run's events (a slow watcher may need them)."""
        keep = bisect.bisect_right(self.ids, self.run_start)
        if keep:
            self.dropped_until = self.ids[keep - 1]
            del self.ids[:keep], self.frames[:keep]
        self.run_start = self.last_id

    def live(self) -> dict[str, Any] | None:
        """The current run's start (`after`: replay from there) or None when none runs."""
        if self.cut is None:
            return None
        return {"after": self.run_start, "model": self.model}

    async def position(self) -> Position:
        return Position(self.live(), self.cut, self.last_id)

    async def busy(self) -> bool:
        """Whether a run of the session goes on."""
        return self.running

    async def watch(
        self, after: int | None, *, until: asyncio.Event | None = None
    ) -> AsyncGenerator[bytes, None]:
        """The events after `after` (None: from now), then each new one as it comes, until
        `until` is set (the server stops; `wake` then ends the wait)."""
        if after is None:
            after = self.last_id
        if after > self.last_id or after < self.dropped_until:
            yield sse(None, {"type": "resync"})  # this log cannot continue that stream
            after = self.last_id
        yield b"retry: 1000\n\n"
        while until is None or not until.is_set():
            changed = self._changed
            start = bisect.bisect_right(self.ids, after)
            if start < len(self.ids):
                batch = b"".join(self.frames[start:])
                after = self.ids[-1]
                yield batch
                continue
            try:
                async with asyncio.timeout(HEARTBEAT):
                    await changed.wait()
            except TimeoutError:
                yield b": ping\n\n"

    # runs ---------------------------------------------------------------------------------

    async def launch(self, text: str, *, model: str | None, agent: str | None,
                     generation: int, mode: SessionMode | None = None,
                     plan: list[str] | None = None) -> int | Refused:
        """Start a run (`/compact`: a compaction; `plan`: carry out an approved plan); the
        id its events come after."""
        if self.running:
            return Refused(409, "a run is in progress in this session")
        try:
            if text == "/compact":
                self.compact(model=model, generation=generation)
            else:
                self.start(text, model=model, agent=agent, generation=generation, mode=mode,
                           plan=plan)
        except ConfigError as exc:  # the configuration cannot be read: nothing started
            return Refused(400, str(exc))
        return self.run_start

    def compact(self, *, model: str | None, generation: int) -> None:
        """`/compact` from the page: summarize the older turns now, as a run of its own."""
        service = self._ready_service(generation)
        self._new_log()
        self.cut = count_messages(service.store, self.session_id)
        self.abort = AbortSignal()
        self.model = model or ""
        self.append({"type": "user", "text": "/compact", "model": model or "", "agent": ""})
        self.task = asyncio.get_running_loop().create_task(self._drive_compact(service))

    async def _drive_compact(self, service: SessionService) -> None:
        assert self.abort is not None
        try:
            session = service.open(session_id=self.session_id)
            for event in await service.compact(session, abort=self.abort):
                self._record(event, "")
            end = {"reason": "finished", "detail": ""}
        except Exception as exc:  # shown to the person; the server goes on
            log.exception("compaction failed")
            end = {"reason": "error", "detail": f"Compacting failed: {type(exc).__name__}: {exc}"}
        self.append({"type": "run_finished", **end, "steps": 0, "usage": None})
        self.cut = None

    def _ready_service(self, generation: int) -> SessionService:
        if self.service is None or self.generation != generation:
            if self.service is not None:  # the settings changed: a new service reads them
                old = self.service
                asyncio.get_running_loop().create_task(old.aclose())
            self.service = self.make_service()
            self.generation = generation
        return self.service

    def start(
        self, text: str, *, model: str | None, agent: str | None, generation: int,
        mode: SessionMode | None = None, plan: list[str] | None = None,
    ) -> None:
        """Start a run (the caller checked that none runs); its events go to the log."""
        service = self._ready_service(generation)
        self._new_log()
        self.cut = count_messages(service.store, self.session_id)
        self.abort = AbortSignal()
        self.model = model or ""
        self.append({"type": "user", "text": text, "model": model or "", "agent": agent or ""})
        self.task = asyncio.get_running_loop().create_task(
            self._drive(service, text, model=model, agent=agent, abort=self.abort, mode=mode,
                        plan=plan)
        )

    async def _drive(
        self, service: SessionService, text: str, *, model: str | None, agent: str | None,
        abort: AbortSignal, mode: SessionMode | None = None, plan: list[str] | None = None,
    ) -> None:
        finished = False
        try:
            session = service.open(session_id=self.session_id)
            label = service.model_label(session, model)
            events = (service.approve_plan(session, plan, abort=abort, model=model,
                                           mode=mode or "default") if plan else
                      service.run(session, text, abort=abort, model=model, agent_name=agent,
                                  mode=mode))
            async for event in events:
                self._record(event, label)
                finished = finished or event.type == "run_finished"
        except ConfigError as exc:
            self.append({"type": "notice", "text": str(exc), "level": "error"})
            self.append({"type": "run_finished", "reason": "error", "detail": str(exc),
                         "steps": 0, "usage": None})
            finished = True
        except Exception as exc:  # shown to the person; the server goes on
            log.exception("run failed")
            detail = f"The run failed: {type(exc).__name__}: {exc}"
            self.append({"type": "run_finished", "reason": "error", "detail": detail,
                         "steps": 0, "usage": None})
            finished = True
        finally:
            if not finished:
                self.append({"type": "run_finished", "reason": "aborted",
                             "detail": abort.reason or "stopped", "steps": 0, "usage": None})
            for request_id in list(self.pending):
                self.append({"type": "answered", "request_id": request_id, "answer": None})
            self.pending.clear()
            self.cut = None

    def _record(self, event: Event, label: str) -> None:
        data = event_data(event, label, self.costing)
        if data["type"] in ("permission", "question"):
            self.pending[str(data["request_id"])] = data
        self.append(data)

    # answers ------------------------------------------------------------------------------

    def reply(self, request_id: str, reply: Reply) -> bool:
        """A permission question answered; False when nothing waits for it any more."""
        if self.service is None or not self.service.reply(request_id, reply):
            return False
        self.pending.pop(request_id, None)
        self.append({"type": "answered", "request_id": request_id, "answer": reply_text(reply)})
        return True

    async def give_reply(self, request_id: str, reply: Reply) -> bool:
        return self.reply(request_id, reply)

    async def give_answer(self, request_id: str, answer: str | None) -> bool:
        return self.answer(request_id, answer)

    async def halt(self) -> bool:
        return self.stop()

    def answer(self, request_id: str, answer: str | None) -> bool:
        """A question of the ask tool answered (None: declined)."""
        if self.service is None or not self.service.answer(request_id, answer):
            return False
        self.pending.pop(request_id, None)
        self.append({"type": "answered", "request_id": request_id, "answer": answer})
        return True

    def stop(self) -> bool:
        if not self.running or self.abort is None:
            return False
        self.abort.abort("aborted by user")
        return True

    async def aclose(self) -> None:
        await close_run(self.abort, self.task, self.service)
        self.service = None


async def close_run(
    abort: AbortSignal | None, task: asyncio.Task[Any] | None, service: SessionService | None
) -> None:
    """The server stops: a hub's run is aborted, given 10 s to end, and its service closed."""
    if abort is not None:
        abort.abort("the server stopped")
    if task is not None:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(asyncio.shield(task), 10)
    if service is not None:
        await service.aclose()
