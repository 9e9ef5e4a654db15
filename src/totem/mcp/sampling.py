"""Sampling: an MCP server asks the session's model for an answer.

Refused unless the person allows it (permission `mcp-sampling`, pattern = the server's
name; with nobody to ask it is denied). The `Sampler` protocol keeps this free of any one
provider; `ProviderSampler` serves it with a totem provider and model. Nothing here imports
the MCP SDK.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from totem.messages import Message, TextPart, new_id
from totem.providers.base import ModelRequest, Provider, StreamEnd, TextChunk

__all__ = ["ProviderSampler", "Sampler", "SamplingReply", "SamplingRequest"]


@dataclass(slots=True)
class SamplingRequest:
    messages: list[tuple[Literal["user", "assistant"], str]]
    max_tokens: int
    system: str | None = None
    temperature: float | None = None
    stop: list[str] = field(default_factory=list)


@dataclass(slots=True)
class SamplingReply:
    text: str
    model: str
    stop_reason: Literal["endTurn", "maxTokens", "stopSequence"] = "endTurn"


class Sampler(Protocol):
    async def __call__(self, request: SamplingRequest) -> SamplingReply: ...


class ProviderSampler:
    """Answers with one streamed model call, no tools."""

    def __init__(self, provider: Provider, model: str, *, label: str | None = None) -> None:
        self.provider = provider
        self.model = model
        self.label = label or model

    async def __call__(self, request: SamplingRequest) -> SamplingReply:
        messages = [
            Message(id=new_id("msg"), session_id="mcp-sampling", role=role, parts=[TextPart(text)])
            for role, text in request.messages
        ]
        model_request = ModelRequest(
            model=self.model,
            system=request.system or "",
            messages=messages,
            max_tokens=request.max_tokens,
            temperature=request.temperature,
        )
        chunks: list[str] = []
        reason: Literal["endTurn", "maxTokens", "stopSequence"] = "endTurn"
        async for event in self.provider.stream(model_request):
            if isinstance(event, TextChunk):
                chunks.append(event.text)
            elif isinstance(event, StreamEnd) and event.reason == "length":
                reason = "maxTokens"
        return SamplingReply("".join(chunks), self.label, reason)
