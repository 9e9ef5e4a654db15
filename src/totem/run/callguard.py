"""Holding a model's tool calls to what is useful, while the answer streams.

Small models repeat one call over and over inside a single answer (one answer held the
same call 228 times and ran until it was killed). `guard_calls(events, guard)` passes a
stream through and, for the calls in it:

- holds each call until its arguments are whole (they parse as a JSON object, a later
  call begins, or the stream ends), then passes it on in one piece, numbered densely;
- drops a call identical (name and arguments) to an earlier one of the same answer: the
  first is kept; when one call shows up a third time the answer is ended there and then
  (`guard.stopped`), without waiting for the rest;
- keeps at most `max_calls` calls; the others are dropped and counted (`guard.dropped`);
- ends an answer that has become degenerate (`guard.degenerate`): its text or a call's
  arguments ending in one short piece repeated hundreds of times (2,048 tokens of tab
  characters in an edit's new_string, 183 s on a CPU), in the same line again and again, or
  in the same block of lines again and again (the 1.5B, writing acronym.py, cycled through
  23 lines of `words = words.replace("-", " ")` for every punctuation mark until its 2,048
  tokens ran out, twice in one try). The call it was writing is dropped.

Every other event passes at once. The caller tells the model what was dropped.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from totem.providers.base import (
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
)
from totem.repeats import RUN_CHARS, SAME_LINES, degenerate

__all__ = ["CallGuard", "degenerate", "guard_calls"]

REPEATS_TO_STOP = 3
LOOK_EVERY = 256  # characters between two looks


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
    degenerate: bool = False  # the answer was ended early: it kept repeating one piece
    _seen: dict[str, int] = field(default_factory=dict)
    _text: list[str] = field(default_factory=list)
    _looked: dict[int, int] = field(default_factory=dict)

    def restart(self) -> None:
        """Forget the answer so far: it was cut and is asked for again."""
        self.kept = self.dropped = self.repeated = 0
        self.stopped = self.degenerate = False
        self._seen.clear()
        self._text.clear()
        self._looked.clear()

    def _grew(self, key: int, parts: list[str]) -> bool:
        """Whether the text in `parts` (the answer's, key -1, or a call's arguments) has
        become degenerate; looked at every LOOK_EVERY characters, at its end only."""
        size = sum(len(p) for p in parts)
        if size - self._looked.get(key, 0) < LOOK_EVERY:
            return False
        self._looked[key] = size
        tail: list[str] = []
        kept = 0
        for part in reversed(parts):
            tail.append(part)
            kept += len(part)
            if kept >= RUN_CHARS * SAME_LINES:
                break
        self.degenerate = degenerate("".join(reversed(tail)))
        return self.degenerate

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
        begin = dataclasses.replace(held.begin, index=index)
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
                args = held[event.index].args
                args.append(event.text)
                if not _whole(held[event.index]) and guard._grew(event.index, args):
                    del held[event.index]  # a call written in a loop: never run
                    out = settle(list(held))
                else:
                    out = settle([event.index]) if _whole(held[event.index]) else []
            elif isinstance(event, StreamEnd):
                out = [*settle(list(held)), event]
            elif isinstance(event, TextChunk):
                guard._text.append(event.text)
                out = [] if guard._grew(-1, guard._text) else [event]
            else:
                out = [event]
            for item in out:
                yield item
            if guard.stopped or guard.degenerate:
                why = "repeated call" if guard.stopped else "degenerate"
                yield StreamEnd("tool_calls" if guard.kept else "stop", why)
                return
    finally:
        close = getattr(events, "aclose", None)
        if (guard.stopped or guard.degenerate) and close is not None:
            await close()
