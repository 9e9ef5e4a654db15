"""Test doubles shipped in the package: providers that emit the real `StreamEvent` union.

`ScriptedProvider` plays a list of turns, one per model call; `FunctionProvider` asks a
function for each turn. Both record the requests they received. A config provider of
`kind: scripted` loads its turns from a JSON file (`options.script`), so a whole `totem run`
can be driven without a model:

    [{"text": "I will read it."}, {"tool": "read", "args": {"path": "README.md"}},
     {"calls": [{"tool": "glob", "args": {"pattern": "*.py"}}, ...]},
     {"reasoning": "hmm", "text": "Done."}, {"error": "rate_limited"}, {"finish": "length"}]
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from totem.messages import Usage
from totem.providers.base import (
    AuthError,
    ModelRequest,
    ProviderError,
    RateLimited,
    ReasoningChunk,
    RetryableError,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
    UsageReport,
)

__all__ = ["FunctionProvider", "ScriptedProvider", "Turn", "call", "reply", "turn_from_json"]

Turn: TypeAlias = Sequence[StreamEvent] | ProviderError


def reply(text: str, *, reasoning: str = "", chunk: int = 0) -> list[StreamEvent]:
    """A plain answer, optionally split into chunks of `chunk` characters."""
    events: list[StreamEvent] = []
    if reasoning:
        events.append(ReasoningChunk(reasoning))
    size = chunk or max(len(text), 1)
    events += [TextChunk(text[i : i + size]) for i in range(0, len(text), size)]
    events.append(UsageReport(Usage(input=10, output=max(1, len(text) // 4))))
    events.append(StreamEnd("stop"))
    return events


def call(*calls: tuple[str, dict[str, Any]] | tuple[str, str], text: str = "") -> list[StreamEvent]:
    """Tool calls (name, args) in one answer; args may be a raw string (e.g. broken JSON)."""
    events: list[StreamEvent] = [TextChunk(text)] if text else []
    for index, (name, args) in enumerate(calls):
        raw = args if isinstance(args, str) else json.dumps(args)
        events.append(ToolCallBegin(index, f"call_{index}_{abs(hash(raw)) % 10**8}", name))
        events.append(ToolArgsChunk(index, raw))
    events.append(UsageReport(Usage(input=10, output=5)))
    events.append(StreamEnd("tool_calls"))
    return events


_ERRORS: dict[str, Callable[[], ProviderError]] = {
    "rate_limited": lambda: RateLimited("rate limited (scripted)", status=429, retry_after=0),
    "server": lambda: RetryableError("server error (scripted)", status=500, retry_after=0),
    "auth": lambda: AuthError("invalid API key (scripted)", status=401),
}


def turn_from_json(item: dict[str, Any]) -> Turn:
    if "error" in item:
        return _ERRORS[item["error"]]()
    if "tool" in item:
        return call((item["tool"], item.get("args", {})), text=item.get("text", ""))
    if "calls" in item:
        pairs = [(c["tool"], c.get("args", {})) for c in item["calls"]]
        return call(*pairs, text=item.get("text", ""))
    events = reply(item.get("text", ""), reasoning=item.get("reasoning", ""))
    if "finish" in item:
        events[-1] = StreamEnd(item["finish"])
    return events


class FunctionProvider:
    """Each model call asks `fn(request, index)` for the turn to play."""

    def __init__(
        self,
        fn: Callable[[ModelRequest, int], Turn],
        *,
        name: str = "function",
        delay: float = 0.0,
    ) -> None:
        self.name = name
        self.fn = fn
        self.delay = delay
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        turn = self.fn(request, len(self.requests) - 1)
        if isinstance(turn, ProviderError):
            raise turn
        for event in turn:
            if self.delay:
                await asyncio.sleep(self.delay)
            yield event

    async def aclose(self) -> None:
        return None


class ScriptedProvider(FunctionProvider):
    """Plays `turns` in order; past the end it answers with `fallback` text."""

    def __init__(
        self,
        turns: Sequence[Turn],
        *,
        name: str = "scripted",
        delay: float = 0.0,
        fallback: str = "(the script has no more turns)",
    ) -> None:
        self.turns = list(turns)

        def play(_request: ModelRequest, index: int) -> Turn:
            return self.turns[index] if index < len(self.turns) else reply(fallback)

        super().__init__(play, name=name, delay=delay)

    @classmethod
    def from_file(cls, path: str | Path, *, name: str = "scripted") -> ScriptedProvider:
        items = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls([turn_from_json(item) for item in items], name=name)
