"""Context size: the request is estimated before each call and kept under the window.

The stored history is never rewritten. Each request is built from a *derived* list:

1. the latest summary (a `SummaryPart`) stands for every message it covers, but for the
   person's request being worked on, whose words follow it unchanged;
2. with `earlier_asked_and_answered` (a small model's assist), the turns before the request
   at hand keep only what the person typed and the answer that closed each turn;
3. over the window (minus room for the answer), old tool results become one-line summaries
   and old images `[image content]` — older than a boundary that only moves forward, and
   in big steps, so the prefix a provider caches stays the same from one request to the next;
4. still over, the loop asks the model for a summary of the older turns (`needs_summary`,
   with the messages to summarize), stores it, and derives again;
5. as a last resort the remaining large outputs are cut, so no request exceeds the window.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from totem.messages import (
    Message,
    NoticePart,
    Part,
    ReasoningPart,
    SummaryPart,
    TextPart,
    ToolPart,
)
from totem.providers.base import ToolSpec

__all__ = ["Compactor", "Plan", "context_note", "estimate", "output_limit_for", "transcript"]

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_000
KEEP_RECENT = 2  # assistant messages whose tool results stay whole
SHORTEN_TARGET = 0.6  # after shortening, aim this far under the budget
LAST_RESORT_CHARS = 2_000
SUMMARY_PREFIX = "Summary of the earlier part of this conversation:\n\n"
# a summary never stands for the request being worked on: its words follow the summary
REQUEST_PREFIX = "The person's request being worked on, as they wrote it:"
OUTPUT_SHARE = 4  # one tool's output takes at most this fraction (1/4) of a known window


def output_limit_for(limit: int, window: int | None) -> int:
    """The characters one tool's output may keep: `limit`, and no more than a quarter of a
    known window. With 30,000 characters on an 8k window, one read of a README filled the
    window; the read was compacted away, read again, and the run ended in the repeat guard."""
    if window is None:
        return limit
    return max(LAST_RESORT_CHARS, min(limit, window * CHARS_PER_TOKEN // OUTPUT_SHARE))


def _part_chars(part: Part) -> int:
    if isinstance(part, TextPart):
        return len(part.sent)
    if isinstance(part, ReasoningPart):
        return len(part.text) + len(part.signature or "") + len(part.redacted_data or "")
    if isinstance(part, ToolPart):
        images = len(part.images) * IMAGE_TOKENS * CHARS_PER_TOKEN
        given = 0 if part.from_text else len(part.raw_input)  # read from the text: sent in it
        return len(part.name) + given + len(part.output) + 40 + images
    return 0  # notices and summary records are never sent


def _message_chars(message: Message) -> int:
    """What `message` costs when sent. A text that no change could be read from (cut at
    the answer's limit, looping: the call's meta says "unreadable") is not sent again, only
    the step that chose it (localserver/stepmode.py): counted, two such texts of the 1.5B,
    16,600 characters of a loop, made the run summarize an 8k window at 4,600 real tokens,
    a full prompt of the CPU's time (~80 s) for a summary and ~80 s more after it."""
    unread = any(isinstance(p, ToolPart) and p.from_text and (p.meta or {}).get("unreadable")
                 for p in message.parts)
    return sum(_part_chars(p) for p in message.parts
               if not (unread and isinstance(p, TextPart)))


_SPEC_CHARS: dict[int, tuple[Sequence[ToolSpec], int]] = {}


def _spec_chars(specs: Sequence[ToolSpec]) -> int:
    """The serialized size of a tool list, computed once per list (it is paid every step)."""
    if not specs:
        return 0
    cached = _SPEC_CHARS.get(id(specs))
    if cached is not None and cached[0] is specs:
        return cached[1]
    size = len(json.dumps([dataclasses.asdict(s) for s in specs]))
    if len(_SPEC_CHARS) > 64:
        _SPEC_CHARS.clear()
    _SPEC_CHARS[id(specs)] = (specs, size)
    return size


def estimate(system: str, messages: Sequence[Message], specs: Sequence[ToolSpec]) -> int:
    """Tokens of a request, estimated as characters / 4."""
    chars = len(system) + sum(_message_chars(m) for m in messages)
    chars += 16 * len(messages) + _spec_chars(specs)
    return chars // CHARS_PER_TOKEN


@dataclass(slots=True)
class Plan:
    messages: list[Message]
    tokens: int
    shortened: int = 0  # tool results shortened
    cut: int = 0  # with needs_summary: messages[:cut] are to be summarized
    dropped: int = 0  # older messages left out of the request (earlier turns, the last resort)
    needs_summary: bool = False


def _with_summaries(history: Sequence[Message]) -> list[Message]:
    """The history as the model sees it: the latest summary replaces what it covers; an
    answer cut by the connection (asked again after it) and a step the run took back are
    left out."""
    latest: SummaryPart | None = None
    for message in history:
        for part in message.parts:
            if isinstance(part, SummaryPart) and part.kind == "summary":
                latest = part
    visible = [
        m for m in history
        if not m.left_out and not any(isinstance(p, SummaryPart) for p in m.parts)
    ]
    if latest is None:
        return visible
    ids = [m.id for m in visible]
    start = ids.index(latest.covers_until) + 1 if latest.covers_until in ids else 0
    parts: list[Part] = [TextPart(SUMMARY_PREFIX + latest.text, synthetic=True)]
    if _typed(visible[start:]) is None:
        request = _typed(visible[:start])
        if request is not None:  # the request at work was summarized: it is kept as typed
            parts += [TextPart(REQUEST_PREFIX, synthetic=True), *request]
    head = Message(
        id=f"summary_{latest.covers_until}",
        session_id=history[0].session_id,
        role="user",
        parts=parts,
    )
    return [head, *visible[start:]]


def _typed(messages: Sequence[Message]) -> list[TextPart] | None:
    """The text parts of the person's latest message among `messages` (not totem's)."""
    for message in reversed(messages):
        typed = [p for p in message.parts if isinstance(p, TextPart) and not p.synthetic]
        if message.role == "user" and typed:
            return typed
    return None


def _asked_and_answered(messages: Sequence[Message]) -> list[Message]:
    """Of earlier turns, the person's messages (their typed words only) and the answer that
    closed each turn: the last assistant message before the person spoke again, when it is
    text without a call. A summary's head message stays as it is. One pass from the end."""
    kept: list[Message] = []
    closing = True  # no assistant text or call yet between here and the person's next words
    for message in reversed(messages):
        if message.id.startswith("summary_"):
            kept.append(message)
        elif message.role == "user":
            typed = [p for p in message.parts if isinstance(p, TextPart) and not p.synthetic]
            if typed:
                kept.append(dataclasses.replace(message, parts=list(typed)))
                closing = True
        elif any(isinstance(p, TextPart | ToolPart) for p in message.parts):
            if closing and not any(isinstance(p, ToolPart) for p in message.parts) and any(
                    isinstance(p, TextPart) and p.sent.strip() for p in message.parts):
                kept.append(message)
            closing = False
    return kept[::-1]


_ELIDED = "result elided to save context"


def context_note(plan: Plan) -> str:
    """'3 older tool results shortened and 2 older messages left out' (what was done)."""
    said = []
    if plan.shortened:
        said.append(f"{plan.shortened} older tool result{'s' * (plan.shortened != 1)} shortened")
    if plan.dropped:
        said.append(f"{plan.dropped} older message{'s' * (plan.dropped != 1)} left out")
    return " and ".join(said)


def _shorten(part: ToolPart) -> ToolPart:
    first = next((line for line in part.output.splitlines() if line.strip()), "")[:120]
    note = f"[{part.name} {_ELIDED}: {len(part.output)} chars; began: {first}]"
    return dataclasses.replace(part, output=note, images=[])


def _image_free(part: ToolPart) -> ToolPart:
    if not part.images:
        return part
    extra = "\n[image content]" * len(part.images)
    return dataclasses.replace(part, output=part.output + extra, images=[])


def _map_tools(message: Message, fn: object) -> Message:
    assert callable(fn)
    parts = [fn(p) if isinstance(p, ToolPart) else p for p in message.parts]
    return dataclasses.replace(message, parts=parts)


@dataclass(slots=True)
class Compactor:
    window: int | None
    reserve: int = 4_096
    shortened_until: int = 0  # tool results in messages before this index are shortened
    summaries: int = field(default=0)
    # the message from which tool results are kept whole, those before it shortened whatever
    # the size (None: only as the window needs): set by an assist whose model's window is
    # for the request at hand, where the files read and the tests run for an earlier one
    # are stale and cost the most time (a CPU reads ~40 prompt tokens a second)
    whole_from: str | None = None
    # with whole_from: the messages before it keep only the person's typed words and the
    # answer that closed each turn; their steps (calls, results, totem's notes) are left out.
    # On the 1.5B, a second Exercism try carried the first one's 20 steps and test failures
    # (~6,000 tokens): 4 of 10 such tries spent ~100 s of a 300 s try summarizing them, and
    # the summary was the model's code again, not a summary
    earlier_asked_and_answered: bool = False

    @property
    def budget(self) -> int | None:
        if self.window is None:
            return None
        return max(self.window - min(self.reserve, self.window // 4), self.window // 2)

    def plan(
        self, history: Sequence[Message], *, system: str, specs: Sequence[ToolSpec]
    ) -> Plan:
        messages = _with_summaries(history)
        ids = [m.id for m in messages]
        stale = ids.index(self.whole_from) if self.whole_from in ids else 0
        left_out = 0
        if stale and self.earlier_asked_and_answered:
            kept = _asked_and_answered(messages[:stale])
            left_out = stale - len(kept)
            messages, stale = [*kept, *messages[stale:]], len(kept)
        tokens = estimate(system, messages, specs)
        budget = self.budget
        if left_out and (budget is None or tokens <= budget):
            return Plan(messages, tokens, dropped=left_out)
        if stale == 0 and (budget is None or (tokens <= budget and self.shortened_until == 0)):
            return Plan(messages, tokens, dropped=left_out)
        tool_messages = [i for i, m in enumerate(messages) if any(
            isinstance(p, ToolPart) for p in m.parts)]
        protected = tool_messages[-KEEP_RECENT:][0] if tool_messages else len(messages)
        if budget is not None and tokens > budget:
            self.shortened_until = max(self.shortened_until, protected)
        limit = max(min(self.shortened_until, protected), stale)
        derived = [
            _map_tools(m, _shorten) if i < limit else _map_tools(m, _image_free)
            if i < protected else m
            for i, m in enumerate(messages)
        ]
        shortened = sum(
            1 for m in messages[:limit] for p in m.parts if isinstance(p, ToolPart)
        )
        tokens = estimate(system, derived, specs)
        if budget is None or tokens <= budget:
            return Plan(derived, tokens, shortened, dropped=left_out)
        cut = self._cut(derived, system=system, specs=specs, budget=budget)
        if cut > 0:
            return Plan(derived, tokens, shortened, cut=cut, dropped=left_out, needs_summary=True)
        last = self._last_resort(derived, system=system, specs=specs, budget=budget)
        last.dropped += left_out
        return last

    def _cut(
        self, messages: list[Message], *, system: str, specs: Sequence[ToolSpec], budget: int
    ) -> int:
        """Where the kept part starts: the recent messages that use up to half the budget.

        Every message is whole in itself (a step's calls travel with their results), so any
        message can start the kept part; the summary goes before it as a user message.
        """
        kept = estimate(system, [], specs)
        cut = len(messages)
        for index in range(len(messages) - 1, 0, -1):
            kept += estimate("", [messages[index]], [])
            if kept > budget // 2 and cut < len(messages):
                break
            cut = index
        return cut if cut < len(messages) else 0

    def last_resort(self, plan: Plan, *, system: str, specs: Sequence[ToolSpec]) -> Plan:
        return self._last_resort(plan.messages, system=system, specs=specs,
                                 budget=self.budget or plan.tokens)

    def _last_resort(
        self, messages: list[Message], *, system: str, specs: Sequence[ToolSpec], budget: int
    ) -> Plan:
        cut_parts: set[str] = set()

        def cut_part(part: ToolPart) -> ToolPart:
            if len(part.output) <= LAST_RESORT_CHARS:
                return part
            cut_parts.add(part.call_id)
            head = part.output[:LAST_RESORT_CHARS]
            return dataclasses.replace(part, output=head + "\n[... cut to fit the window ...]")

        derived = [_map_tools(m, cut_part) for m in messages]
        tokens = estimate(system, derived, specs)
        dropped = 0
        while tokens > budget and len(derived) > 1:
            derived.pop(1 if derived[0].role == "user" and len(derived) > 2 else 0)
            dropped += 1
            tokens = estimate(system, derived, specs)
        shortened = sum(1 for m in messages for p in m.parts
                        if isinstance(p, ToolPart) and (p.call_id in cut_parts
                                                        or _ELIDED in p.output))
        return Plan(derived, tokens, shortened=shortened, dropped=dropped)


def transcript(messages: Sequence[Message], *, max_chars: int) -> str:
    """The older turns as plain text for the summary request, the newest kept when cut."""
    lines: list[str] = []
    for message in messages:
        if message.left_out:
            continue
        for part in message.parts:
            if isinstance(part, TextPart):
                text = part.sent
                lines.append(f"{message.role.upper()}: {text}")
            elif isinstance(part, ToolPart):
                args = json.dumps(part.input, ensure_ascii=False) if part.input else ""
                result = part.output if len(part.output) < 600 else part.output[:600] + " [...]"
                lines.append(f"TOOL {part.name} {args[:300]} -> {result}")
            elif isinstance(part, NoticePart | ReasoningPart | SummaryPart):
                continue
    text = "\n".join(lines)
    if len(text) > max_chars:
        text = "[... earliest part omitted ...]\n" + text[-max_chars:]
    return text


def summary_instruction() -> str:
    from pathlib import Path

    prompt = Path(__file__).parent.parent / "prompt" / "compact.txt"
    return prompt.read_text(encoding="utf-8").strip()


def summary_request_text(
    plan: Plan, *, instruction: str, budget: int
) -> tuple[str, str] | None:
    """(id of the last message covered, transcript to summarize), or None when nothing can be."""
    old = plan.messages[: plan.cut]
    real = [m for m in old if not m.id.startswith("summary_")]
    if not real:
        return None
    room = budget - len(instruction) // CHARS_PER_TOKEN - 1_500  # the summary's own size
    return real[-1].id, transcript(old, max_chars=max(room, 1_000) * CHARS_PER_TOKEN)
