"""The Anthropic Messages wire format, as pure functions tests call directly.

`to_wire(request, options=..., provider=...)` is the body of POST /v1/messages;
`cache_markers(body)` adds the prompt-cache breakpoints to such a body; `from_wire(name, data,
state)` maps one stream event to `StreamEvent`s and `finish(state)` closes the stream.
`AnthropicProvider` (anthropic.py) adds HTTP. Options, from the provider's configuration or
the request:

    max_tokens   the output limit when the request sets none (default 8192, 32000 thinking)
    thinking     {budget_tokens: N} (or N) asks for extended thinking; {type: ...} is sent as is
    cache        false: no cache_control markers (default true)
    cache_ttl    "1h" for one-hour cache entries (default: the API's five minutes)
    extra_body   a dict merged into the request body

Thinking blocks go back unchanged, signature and all, only to the provider that wrote them
(`Message.model` is "provider/model"); from anywhere else they are dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, assert_never

from totem.messages import (
    Message,
    NoticePart,
    ReasoningPart,
    SummaryPart,
    TextPart,
    ToolPart,
    Usage,
)
from totem.providers.base import (
    ModelRequest,
    ProviderError,
    ReasoningChunk,
    RetryableError,
    StopReason,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
    UsageReport,
)
from totem.providers.catalog.profiles import profile_for
from totem.providers.transport.retry import classify_status

__all__ = [
    "ABORTED_OUTPUT",
    "MessagesStreamState",
    "cache_markers",
    "finish",
    "from_sse",
    "from_wire",
    "to_wire",
]

ABORTED_OUTPUT = "[Aborted by user]"
NO_OUTPUT = "(no output)"
DEFAULT_MAX_TOKENS = 8192
THINKING_MAX_TOKENS = 32000
MAX_CACHE_MARKERS = 4
Json = dict[str, Any]

# -- request ---------------------------------------------------------------------------------


def to_wire(
    request: ModelRequest, *, options: Mapping[str, Any] | None = None, provider: str | None = None
) -> Json:
    """The Messages body for `request`; `request.options` override `options`.

    `provider` is the name of the provider the body is for: thinking from messages whose
    `model` starts with "provider/" is sent back, all other thinking is dropped.
    """
    opts = {**(options or {}), **request.options}
    messages = _messages(request.messages, provider)
    thinking = _thinking(opts.get("thinking"))
    if thinking is not None and _unsigned_tool_turn(messages):
        # The API wants the turn that called the tools to start with its thinking block;
        # a turn from another provider has none, so this one request goes without thinking.
        thinking = None
    body: Json = {
        "model": request.model,
        "max_tokens": _max_tokens(request, opts, thinking),
        "messages": messages,
        "stream": True,
    }
    if request.system:
        body["system"] = [{"type": "text", "text": request.system}]
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
    if thinking is not None:
        body["thinking"] = thinking
    elif request.temperature is not None:  # thinking allows no temperature of one's own
        body["temperature"] = request.temperature
    if opts.get("cache", True) is not False:
        body = cache_markers(body, ttl=opts.get("cache_ttl"))
    extra = opts.get("extra_body")
    if isinstance(extra, Mapping):
        body.update(extra)
    return body


def cache_markers(body: Json, *, ttl: Any = None, limit: int = MAX_CACHE_MARKERS) -> Json:
    """`body` with `cache_control` breakpoints: the last system block, the last tool, and
    the last content block of the last two user messages, `limit` at most, in that order.

    The input is not changed; the blocks that get a marker are copied. `ttl` "1h" asks for
    one-hour entries.
    """
    marker: Json = {"type": "ephemeral"}
    if isinstance(ttl, str) and ttl and ttl != "5m":
        marker["ttl"] = ttl
    out = dict(body)
    left = limit
    for key in ("system", "tools"):
        items = out.get(key)
        if left > 0 and isinstance(items, list) and items:
            out[key] = [*items[:-1], {**items[-1], "cache_control": dict(marker)}]
            left -= 1
    messages = list(out.get("messages") or [])
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    for i in reversed(users[-2:]):
        content = messages[i].get("content")
        if left <= 0 or not isinstance(content, list) or not content:
            continue
        last = {**content[-1], "cache_control": dict(marker)}
        messages[i] = {**messages[i], "content": [*content[:-1], last]}
        left -= 1
    if "messages" in out:
        out["messages"] = messages
    return out


def _same_provider(message: Message, provider: str | None) -> bool:
    if provider is None or not message.model:
        return False
    return message.model.partition("/")[0] == provider


def _messages(history: list[Message], provider: str | None) -> list[Json]:
    """Our messages as alternating user / assistant turns of content blocks."""
    wire: list[Json] = []

    def push(role: str, blocks: list[Json]) -> None:
        if not blocks:
            return
        if wire and wire[-1]["role"] == role:  # the API wants the roles to alternate
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})

    for message in history:
        if message.role == "user":
            push("user", _user_blocks(message))
            continue
        push("assistant", _assistant_blocks(message, _same_provider(message, provider)))
        tools = [p for p in message.parts if isinstance(p, ToolPart)]
        # Every result of one turn in one user message, tool_result blocks first.
        results = [_tool_result(p) for p in tools if not p.from_text]
        written = [f"Result of {p.name}:\n{_output(p)}" for p in tools if p.from_text]
        if written:  # a call the model wrote as text gets its result as text
            results.append({"type": "text", "text": "\n\n".join(written)})
        push("user", results)
    return wire


def _user_blocks(message: Message) -> list[Json]:
    blocks: list[Json] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            text = part.sent
            if text.strip():
                blocks.append({"type": "text", "text": text})
            blocks += [{"type": "image", "source": {"type": "base64",
                                                    "media_type": i.media_type, "data": i.data}}
                       for i in part.images if i.media_type in IMAGE_TYPES]
    return blocks


def _assistant_blocks(message: Message, same_provider: bool) -> list[Json]:
    blocks: list[Json] = []
    for part in message.parts:
        match part:
            case ReasoningPart(text=text, signature=signature, redacted_data=redacted):
                if not same_provider:
                    continue
                if redacted:
                    blocks.append({"type": "redacted_thinking", "data": redacted})
                # Thinking without its signature is refused. A signature on a redacted part
                # belongs to a thinking block that followed it in the stream.
                if signature:
                    blocks.append({"type": "thinking", "thinking": text, "signature": signature})
            case TextPart(text=text):
                if text.strip():  # the API refuses blank text blocks
                    blocks.append({"type": "text", "text": text})
            case ToolPart():
                if not part.from_text:
                    blocks.append({"type": "tool_use", "id": _tool_id(part.call_id),
                                   "name": part.name, "input": _input(part)})
            case NoticePart() | SummaryPart():  # shown to the person / resolved by the loop
                pass
            case _:
                assert_never(part)
    return blocks


_BAD_ID = re.compile(r"[^A-Za-z0-9_-]")


def _tool_id(call_id: str) -> str:
    """A call id the API accepts (^[A-Za-z0-9_-]+$), also for calls of other providers."""
    return _BAD_ID.sub("_", call_id) or "toolu_unnamed"


def _input(part: ToolPart) -> Json:
    if part.input is not None:
        return part.input
    try:
        parsed = json.loads(part.raw_input)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _output(part: ToolPart) -> str:
    return part.output if part.state in ("completed", "error") else ABORTED_OUTPUT


IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def _tool_result(part: ToolPart) -> Json:
    output = _output(part)
    text = output if output.strip() else ""
    block: Json = {"type": "tool_result", "tool_use_id": _tool_id(part.call_id)}
    if part.images:
        content: list[Json] = [{"type": "text", "text": text}] if text else []
        for image in part.images:
            if image.media_type in IMAGE_TYPES:
                content.append({"type": "image", "source": {
                    "type": "base64", "media_type": image.media_type, "data": image.data}})
            else:  # the API takes these four types only
                content.append({"type": "text", "text": f"[{image.media_type} image omitted]"})
        block["content"] = content
    else:
        block["content"] = text or NO_OUTPUT
    if part.state != "completed":
        block["is_error"] = True
    return block


def _thinking(value: Any) -> Json | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return {"type": "enabled", "budget_tokens": value} if value > 0 else None
    if isinstance(value, Mapping):
        if "type" in value:
            return None if value["type"] == "disabled" else dict(value)
        budget = value.get("budget_tokens")
        if isinstance(budget, int) and budget > 0:
            return {"type": "enabled", "budget_tokens": budget}
    return None


def _unsigned_tool_turn(messages: list[Json]) -> bool:
    """Whether the last assistant turn called tools without starting with thinking."""
    last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
    if last is None or not any(b["type"] == "tool_use" for b in last["content"]):
        return False
    return last["content"][0]["type"] not in ("thinking", "redacted_thinking")


def _max_tokens(request: ModelRequest, opts: Mapping[str, Any], thinking: Json | None) -> int:
    if request.max_tokens:
        return request.max_tokens
    configured = opts.get("max_tokens")
    if isinstance(configured, int) and configured > 0:
        return configured
    value = DEFAULT_MAX_TOKENS
    if thinking is not None:
        budget = thinking.get("budget_tokens")
        extra = budget + DEFAULT_MAX_TOKENS if isinstance(budget, int) else 0
        value = max(THINKING_MAX_TOKENS, extra)
    ceiling = profile_for(request.model).max_output
    return min(value, ceiling) if ceiling else value


# -- stream ----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Block:
    kind: str  # the content block's type: text, thinking, tool_use, ...
    tool: int = -1  # our index of the call, for tool_use
    start_input: Any = None  # a whole input given in content_block_start
    args: bool = False  # an input_json_delta was seen
    closed: bool = False


@dataclass(slots=True)
class MessagesStreamState:
    """What one stream has shown so far; `from_wire` updates it, `finish` reads it."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    tools: int = 0
    started: bool = False  # message_start seen
    stopped: bool = False  # message_stop seen
    stop_reason: str | None = None
    counts: dict[str, int] = field(default_factory=dict)  # the latest usage numbers
    output: bool = False
    malformed: list[str] = field(default_factory=list)


def from_sse(event_name: str, data: str, state: MessagesStreamState) -> list[StreamEvent]:
    """The events of one SSE event; data that is not a JSON object is remembered, skipped."""
    text = data.strip()
    if not text:
        return []
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        if event_name == "error":
            raise RetryableError(f"error in stream: {text[:500]}")
        state.malformed.append(text)
        return []
    return from_wire(event_name, parsed, state)


def from_wire(event_name: str, data: Json, state: MessagesStreamState) -> list[StreamEvent]:
    """The events of one stream event; `ping` and events we do not know give none."""
    kind = data.get("type") or event_name
    if kind == "error" or event_name == "error":
        raise _stream_error(data.get("error"))
    events: list[StreamEvent] = []
    if kind == "message_start":
        state.started = True
        message = data.get("message")
        if isinstance(message, dict):
            _count(state, message.get("usage"))
    elif kind == "content_block_start":
        events = _block_start(data, state)
    elif kind == "content_block_delta":
        events = _block_delta(data, state)
    elif kind == "content_block_stop":
        block = state.blocks.get(_int(data.get("index"), -1))
        events = _close(block) if block is not None else []
    elif kind == "message_delta":
        delta = data.get("delta")
        if isinstance(delta, dict) and delta.get("stop_reason"):
            state.stop_reason = str(delta["stop_reason"])
        _count(state, data.get("usage"))
    elif kind == "message_stop":
        state.stopped = True
    if events:
        state.output = True
    return events


def _block_start(data: Json, state: MessagesStreamState) -> list[StreamEvent]:
    block = data.get("content_block")
    if not isinstance(block, dict):
        return []
    kind = str(block.get("type") or "")
    entry = _Block(kind)
    state.blocks[_int(data.get("index"), len(state.blocks))] = entry
    events: list[StreamEvent] = []
    if kind == "text" and _str(block.get("text")):
        events.append(TextChunk(block["text"]))
    elif kind == "thinking":
        if _str(block.get("thinking")):
            events.append(ReasoningChunk(block["thinking"]))
        if _str(block.get("signature")):
            events.append(ReasoningChunk("", signature=block["signature"]))
    elif kind == "redacted_thinking" and _str(block.get("data")):
        events.append(ReasoningChunk("", redacted_data=block["data"]))
    elif kind == "tool_use":
        entry.tool, state.tools = state.tools, state.tools + 1
        entry.start_input = block.get("input")
        events.append(ToolCallBegin(entry.tool, _str(block.get("id")), _str(block.get("name"))))
    return events


def _block_delta(data: Json, state: MessagesStreamState) -> list[StreamEvent]:
    delta = data.get("delta")
    block = state.blocks.get(_int(data.get("index"), -1))
    if not isinstance(delta, dict):
        return []
    kind = delta.get("type")
    if kind == "text_delta" and _str(delta.get("text")):
        return [TextChunk(delta["text"])]
    if kind == "thinking_delta" and _str(delta.get("thinking")):
        return [ReasoningChunk(delta["thinking"])]
    if kind == "signature_delta" and _str(delta.get("signature")):
        return [ReasoningChunk("", signature=delta["signature"])]
    if kind == "input_json_delta" and block is not None and block.kind == "tool_use":
        partial = _str(delta.get("partial_json"))
        if partial:
            block.args = True
            return [ToolArgsChunk(block.tool, partial)]
    return []  # citations, server tools and deltas yet to be invented


def _close(block: _Block) -> list[StreamEvent]:
    """A block ends: a call whose input came whole at its start gets it as arguments."""
    if block.closed:
        return []
    block.closed = True
    if block.kind == "tool_use" and not block.args and block.start_input:
        return [ToolArgsChunk(block.tool, json.dumps(block.start_input, ensure_ascii=False))]
    return []


_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}


def finish(state: MessagesStreamState) -> list[StreamEvent]:
    """The end of a stream: the closing tool arguments, usage, then exactly one StreamEnd.

    Raises `RetryableError` when the stream ended without a stop reason: before any output
    the retry policy tries again; after some, the loop asks again, the cut answer kept apart
    as interrupted.
    """
    if state.stop_reason is None:
        if not state.started and not state.output and state.malformed:
            raise RetryableError(
                f"malformed stream: {len(state.malformed)} event(s) could not be read "
                f"(first: {state.malformed[0][:120]!r})"
            )
        if not state.output:
            raise RetryableError("the stream ended before any output")
        raise RetryableError("the stream was cut before the answer ended (no stop reason)")
    events: list[StreamEvent] = []
    for block in state.blocks.values():
        events += _close(block)
    if state.started or state.counts:
        events.append(UsageReport(_usage(state.counts)))
    reason = _REASONS.get(state.stop_reason, "other")
    if state.tools and reason == "stop":
        reason = "tool_calls"
    events.append(StreamEnd(reason, state.stop_reason))
    return events


def _count(state: MessagesStreamState, usage: Any) -> None:
    """Usage numbers are running totals: a later one replaces an earlier one."""
    if not isinstance(usage, dict):
        return
    for key in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                "cache_creation_input_tokens"):
        if isinstance(usage.get(key), int):
            state.counts[key] = usage[key]
    details = usage.get("output_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("thinking_tokens"), int):
        state.counts["thinking_tokens"] = details["thinking_tokens"]


def _usage(counts: Mapping[str, int]) -> Usage:
    read = counts.get("cache_read_input_tokens", 0)
    write = counts.get("cache_creation_input_tokens", 0)
    return Usage(  # `input` counts every prompt token, the cached ones included
        input=counts.get("input_tokens", 0) + read + write,
        output=counts.get("output_tokens", 0),
        cache_read=read,
        cache_write=write,
        reasoning=counts.get("thinking_tokens", 0),
    )


# Anthropic's error types and the HTTP status each stands for.
ERROR_STATUS: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def _stream_error(error: Any) -> ProviderError:
    """An `error` event in the middle of a stream (overloaded, say), classified."""
    if not isinstance(error, dict):
        return RetryableError(f"error in stream: {error}")
    kind = _str(error.get("type")) or "api_error"
    message = _str(error.get("message")) or kind
    return classify_status(ERROR_STATUS.get(kind, 500), f"error in stream: {kind}: {message}")


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""
