"""The provider boundary: a request in, a stream of `StreamEvent` out.

A protocol adapter (OpenAI chat, Anthropic, ...) maps our messages and tool specs to one wire
API and maps its stream back to the union below. It never retries by itself: `retry.py` holds
the one shared policy, and adapters only classify failures into the errors drawn here:

    ProviderError                 anything that went wrong talking to a model
    ├── RetryableError            try again later (network, 429, 529, 503, other 5xx, cut stream)
    │   └── RateLimited           429 / 529, may carry retry_after
    └── FatalError                do not retry; show the provider's message
        ├── AuthError             401 / 403, missing or wrong key
        └── InvalidRequest        400 and friends: the request itself is wrong
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from totem.messages import Message, Usage

__all__ = [
    "AuthError",
    "FatalError",
    "InvalidRequest",
    "ModelRequest",
    "Provider",
    "ProviderError",
    "LocalServerDown",
    "RateLimited",
    "RetryableError",
    "StreamEnd",
    "StreamEvent",
    "TextChunk",
    "ReasoningChunk",
    "ToolArgsChunk",
    "ToolCallBegin",
    "ToolSpec",
    "UsageReport",
]

StopReason: TypeAlias = Literal["stop", "tool_calls", "length", "other"]


@dataclass(slots=True)
class TextChunk:
    text: str
    signature: str | None = None  # attached to the current text part (Gemini)


@dataclass(slots=True)
class ReasoningChunk:
    """Reasoning text; a chunk may carry only a signature or only redacted data."""

    text: str
    signature: str | None = None
    redacted_data: str | None = None  # starts a redacted reasoning part of its own


@dataclass(slots=True)
class ToolCallBegin:
    index: int
    call_id: str
    name: str
    signature: str | None = None  # attached to the call (Gemini's thoughtSignature)
    # a call read from text the model wrote (providers/localserver/textsteps.py): how it
    # was asked for, kept on the part (ToolPart.meta) so the history shows it as it was
    from_text: bool = False
    meta: dict[str, str] | None = None


@dataclass(slots=True)
class ToolArgsChunk:
    index: int
    text: str


@dataclass(slots=True)
class UsageReport:
    usage: Usage


@dataclass(slots=True)
class StreamEnd:
    reason: StopReason
    raw: str = ""


StreamEvent: TypeAlias = (
    TextChunk | ReasoningChunk | ToolCallBegin | ToolArgsChunk | UsageReport | StreamEnd
)


@dataclass(slots=True)
class ToolSpec:
    """What the model sees of a tool."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(slots=True)
class ModelRequest:
    model: str
    system: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int | None = None
    temperature: float | None = None
    options: dict[str, Any] = field(default_factory=dict)


class Provider(Protocol):
    """A configured provider: owns auth, base URL and the HTTP client."""

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...

    async def aclose(self) -> None: ...


class ProviderError(Exception):
    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class RetryableError(ProviderError):
    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after


class RateLimited(RetryableError):
    pass


class LocalServerDown(RetryableError):
    """Nothing answers at a loopback or private address: a server not started or a wrong
    URL rather than a network blip, so it is retried only briefly."""


class FatalError(ProviderError):
    pass


class AuthError(FatalError):
    pass


class InvalidRequest(FatalError):
    pass
