"""Messages and their parts: what a conversation is made of, as stored.

A message has a role and an ordered list of parts. Parts are typed dataclasses, persisted
as JSON (see `part_to_dict` / `part_from_dict`) the moment they change, so the store holds
everything already shown. The history is append-only: parts change only while they stream
(a tool part goes pending -> running -> completed | error) and never afterwards.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any, Literal, TypeAlias, assert_never

__all__ = [
    "INTERRUPTED",
    "RETRACTED",
    "ImageBlock",
    "Message",
    "NoticePart",
    "Part",
    "ReasoningPart",
    "SummaryPart",
    "Role",
    "TextPart",
    "ToolPart",
    "ToolState",
    "Usage",
    "new_id",
    "part_from_dict",
    "part_to_dict",
]

Role: TypeAlias = Literal["user", "assistant"]
INTERRUPTED = "interrupted"  # the `finish` of an answer cut mid-way by the connection
# the `finish` of a step the run took back: kept and shown, never sent to the model again
# (run/assist.py `retract`: a small model's write of a file's own text, sampled again)
RETRACTED = "retracted"
ToolState: TypeAlias = Literal["pending", "running", "completed", "error"]

# begins anywhere: two processes that start in the same microsecond (eight totem runs
# started at once on one store) must not make the same first id
_counter = int.from_bytes(os.urandom(2), "big")


def new_id(prefix: str) -> str:
    """A sortable unique id: prefix, time in microseconds, a process-local counter."""
    global _counter
    _counter = (_counter + 1) % 0x10000
    return f"{prefix}_{time.time_ns() // 1000:x}{_counter:04x}"


@dataclass(slots=True)
class ImageBlock:
    """An image in a tool result: base64 data and its media type."""

    media_type: str
    data: str


@dataclass(slots=True)
class TextPart:
    text: str
    # For a user message: what the model receives when it differs from what was typed
    # (a command expanded). None means the model receives `text`.
    model_text: str | None = None
    synthetic: bool = False  # written by totem (e.g. "Continue."), not by a person
    signature: str | None = None  # an opaque provider signature on this text (Gemini)
    images: list[ImageBlock] = field(default_factory=list)  # attached by the person
    type: Literal["text"] = "text"

    @property
    def sent(self) -> str:
        """What the model receives of this text (a command's expansion, or the text)."""
        return self.model_text if self.model_text is not None else self.text


@dataclass(slots=True)
class ReasoningPart:
    text: str
    signature: str | None = None  # sent back unchanged to the provider it came from
    redacted_data: str | None = None  # Anthropic's redacted thinking, kept opaque
    type: Literal["reasoning"] = "reasoning"


@dataclass(slots=True)
class ToolPart:
    call_id: str
    name: str
    input: dict[str, Any] | None = None
    raw_input: str = ""
    state: ToolState = "pending"
    output: str = ""
    images: list[ImageBlock] = field(default_factory=list)
    title: str = ""
    from_text: bool = False  # the model wrote this call as text; totem ran it
    signature: str | None = None  # an opaque provider signature on the call (Gemini)
    meta: dict[str, str] | None = None  # e.g. a sub-agent's thread: session_id, agent, model
    started: float | None = None
    ended: float | None = None
    type: Literal["tool"] = "tool"


@dataclass(slots=True)
class NoticePart:
    """Something totem tells the person (a limit reached, a retry); never sent to the model."""

    text: str
    level: Literal["info", "warning", "error"] = "info"
    type: Literal["notice"] = "notice"


@dataclass(slots=True)
class SummaryPart:
    """Compaction: the request for a summary of older turns, or the summary itself.

    Stored in a message of its own; the derived list sent to a model replaces the messages
    up to `covers_until` with the summary. Adapters never see this part.
    """

    kind: Literal["request", "summary"]
    text: str
    covers_until: str  # id of the last message the summary stands for
    type: Literal["summary"] = "summary"


Part: TypeAlias = TextPart | ReasoningPart | ToolPart | NoticePart | SummaryPart


@dataclass(slots=True)
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0

    def add(self, other: Usage) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.reasoning += other.reasoning


@dataclass(slots=True)
class Message:
    id: str
    session_id: str
    role: Role
    parts: list[Part] = field(default_factory=list)
    created: float = field(default_factory=time.time)
    model: str | None = None
    finish: str | None = None
    usage: Usage = field(default_factory=Usage)

    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def interrupted(self) -> bool:
        """An answer the connection cut, then asked for again: kept and shown as cut,
        never sent back to the model as if it had been said."""
        return self.finish == INTERRUPTED

    @property
    def left_out(self) -> bool:
        """Stored and shown, but never part of what the model is sent: an answer cut by the
        connection, or a step the run took back."""
        return self.finish in (INTERRUPTED, RETRACTED)


def part_to_dict(part: Part) -> dict[str, Any]:
    return asdict(part)


def part_from_dict(data: dict[str, Any]) -> Part:
    kind = data.get("type")
    fields = {k: v for k, v in data.items() if k != "type"}
    if kind == "text":
        attached = [ImageBlock(**i) for i in fields.pop("images", [])]
        return TextPart(images=attached, **fields)
    if kind == "reasoning":
        return ReasoningPart(**fields)
    if kind == "tool":
        images = [ImageBlock(**i) for i in fields.pop("images", [])]
        return ToolPart(images=images, **fields)
    if kind == "notice":
        return NoticePart(**fields)
    if kind == "summary":
        return SummaryPart(**fields)
    raise ValueError(f"unknown part type {kind!r}")


def part_json(part: Part) -> str:
    """The JSON of `part_to_dict(part)`, made without copying the part first: the store
    writes a part each time it changes, on the loop that serves the page."""
    data = {name: getattr(part, name) for name in _FIELDS[type(part)]}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=_plain)


def _plain(value: object) -> Any:
    """What json cannot write by itself: a dataclass inside a part (an image)."""
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"{type(value).__name__} cannot be stored as JSON")


_FIELDS: dict[type, tuple[str, ...]] = {
    kind: tuple(f.name for f in fields(kind))
    for kind in (TextPart, ReasoningPart, ToolPart, NoticePart, SummaryPart)
}


def describe(part: Part) -> str:
    """A one-line, display-safe description of a part."""
    match part:
        case TextPart(text=text):
            return text
        case ReasoningPart(text=text):
            return f"(thinking) {text}"
        case ToolPart(name=name, state=state):
            return f"[{name}: {state}]"
        case NoticePart(text=text):
            return f"! {text}"
        case SummaryPart(kind=kind, text=text):
            return f"(summary {kind}) {text}"
        case _:
            assert_never(part)
