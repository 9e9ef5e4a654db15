"""Running a provider's stream in a test and reading what came out.

    events, retries = stream_events(lambda: OpenAIChatProvider(...), ask("hi", model=M),
                                    tries=10)
    texts(events), args_of(events, 0)

`stream_events` goes through the real retry policy (`stream_with_retry`) without its waits,
and closes the provider after the stream.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any

from totem.abort import AbortSignal
from totem.messages import Message, TextPart
from totem.providers.base import (
    ModelRequest,
    Provider,
    RetryableError,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
)
from totem.providers.transport.retry import stream_with_retry

__all__ = ["args_of", "ask", "no_wait", "stream_events", "texts", "user"]

SYSTEM = "You are totem."


def user(text: str, *, message_id: str = "u") -> Message:
    """A user message holding `text`."""
    return Message(id=message_id, session_id="s", role="user", parts=[TextPart(text)])


def ask(
    text: str,
    *,
    model: str,
    before: Sequence[Message] = (),
    after: Sequence[Message] = (),
    message_id: str = "u",
    **fields: Any,
) -> ModelRequest:
    """A request with the system prompt `SYSTEM` and `text` from the user, between the
    messages `before` and `after`; `fields` are other ModelRequest fields."""
    messages = [*before, user(text, message_id=message_id), *after]
    return ModelRequest(model=model, system=SYSTEM, messages=messages, **fields)


async def no_wait(_: float) -> None:
    """The retry policy's sleep, without the wait."""
    return None


def stream_events(
    make_provider: Callable[[], Provider],
    request: ModelRequest,
    *,
    tries: int = 1,
    seen: list[StreamEvent] | None = None,
) -> tuple[list[StreamEvent], list[RetryableError]]:
    """Stream `request` through the retry policy, in a fresh event loop, with the provider
    `make_provider()` builds there; events also land in `seen` as they come."""
    events = [] if seen is None else seen
    retries: list[RetryableError] = []

    async def main() -> None:
        provider = make_provider()
        try:
            stream = stream_with_retry(lambda: provider.stream(request), abort=AbortSignal(),
                                       max_tries=tries, sleep=no_wait,
                                       on_retry=lambda e, n, d: retries.append(e))
            async for event in stream:
                events.append(event)
        finally:
            await provider.aclose()

    asyncio.run(main())
    return events, retries


def texts(events: Sequence[StreamEvent]) -> str:
    """All the text the events carry, joined."""
    return "".join(e.text for e in events if isinstance(e, TextChunk))


def args_of(events: Sequence[StreamEvent], index: int) -> Any:
    """The arguments of tool call `index`, parsed from its chunks."""
    return json.loads("".join(e.text for e in events
                              if isinstance(e, ToolArgsChunk) and e.index == index))
