"""Holding a model's tool calls to what is useful, while the answer streams.

Small models repeat one call over and over inside a single answer (one answer held the
same call 228 times and ran until it was killed). `guard_calls(events, guard)` passes a
stream through and, for the calls in it:

- holds each call until its arguments are whole (they parse as a JSON object, a later
  call begins, or the stream ends), then passes it on in one piece, numbered densely;
- drops a call identical (name and arguments) to an earlier one of the same answer: the
  first is kept; when one call shows up a third time the answer is ended there and then
  (`guard.stopped`), without waiting for the rest;
- keeps at most `max_calls` calls; the others are dropped and counted (`guard.dropped`).

Every other event passes at once. The caller tells the model what was dropped.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from totem.providers.base import StreamEnd, StreamEvent, ToolArgsChunk, ToolCallBegin

__all__ = ["CallGuard", "guard_calls"]

REPEATS_TO_STOP = 3


@dataclass(slots=True)
class _Held:
    begin: ToolCallBegin
    args: list[str] = field(default_factory=list)


@dataclass(slots=True)
class CallGuard:
    """The limits of one answer, and what the guard did to it."""

    max_calls: int | None = None
    stop_on_repeat: bool = True
    kept: int = 0
    dropped: int = 0  # calls over `max_calls`
    repeated: int = 0  # calls identical to an earlier one of the answer
    stopped: bool = False  # the answer was ended early, on a third identical call
    _seen: dict[str, int] = field(default_factory=dict)

    def restart(self) -> None:
        """Forget the answer so far: it was cut and is asked for again."""
        self.kept = self.dropped = self.repeated = 0
        self.stopped = False
        self._seen.clear()

    def _settle(self, held: _Held) -> list[StreamEvent]:
        """The events that pass for a call whose arguments are whole."""
        text = "".join(held.args)
        try:
            key = held.begin.name + json.dumps(json.loads(text or "{}"), sort_keys=True)
        except ValueError:
            key = held.begin.name + text
        self._seen[key] = self._seen.get(key, 0) + 1
        if self._seen[key] > 1:
            self.repeated += 1
            self.stopped = self.stop_on_repeat and self._seen[key] >= REPEATS_TO_STOP
            return []
        if self.max_calls is not None and self.kept >= self.max_calls:
            self.dropped += 1
            return []
        index = self.kept
        self.kept += 1
        begin = ToolCallBegin(index, held.begin.call_id, held.begin.name, held.begin.signature)
        return [begin, ToolArgsChunk(index, text)] if text else [begin]


def _whole(held: _Held) -> bool:
    try:
        return isinstance(json.loads("".join(held.args)), dict)
    except ValueError:
        return False


async def guard_calls(
    events: AsyncIterator[StreamEvent], guard: CallGuard
) -> AsyncIterator[StreamEvent]:
    """`events` with the calls held as the module doc says; closes `events` when it ends
    the answer early."""
    held: dict[int, _Held] = {}

    def settle(indices: list[int]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for index in indices:
            out += guard._settle(held.pop(index))
        return out

    try:
        async for event in events:
            out: list[StreamEvent]
            if isinstance(event, ToolCallBegin):
                out = settle([i for i in held if i != event.index])
                held[event.index] = _Held(event)
            elif isinstance(event, ToolArgsChunk):
                if event.index not in held:  # after its call was settled: nothing useful
                    continue
                held[event.index].args.append(event.text)
                out = settle([event.index]) if _whole(held[event.index]) else []
            elif isinstance(event, StreamEnd):
                out = [*settle(list(held)), event]
            else:
                out = [event]
            for item in out:
                yield item
            if guard.stopped:
                yield StreamEnd("tool_calls" if guard.kept else "stop", "repeated call")
                return
    finally:
        close = getattr(events, "aclose", None)
        if guard.stopped and close is not None:
            await close()
