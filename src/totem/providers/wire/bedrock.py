"""The Converse stream mapping for Bedrock, as pure functions.

`to_wire(request)` is the body of POST {base}/model/{modelId}/converse-stream;
`from_wire(event_type, payload, state)` maps one stream event (messageStart,
contentBlockStart / Delta / Stop, messageStop, metadata, or an exception) to our
`StreamEvent`s; `decode(message, state)` does the same for a message of the AWS event stream;
`finish(state)` gives the closing UsageReport and StreamEnd. `bedrock.py` adds HTTP and auth.

Options read here, from the provider's configuration or the request:

    cache        cache points after the system prompt, the tools and the last user turn
                 (default true; false for models without prompt caching)
    cache_ttl    "5m" or "1h" on each cache point (default: the provider's, 5 minutes)
    extra_body   a dict merged into the request body (additionalModelRequestFields, ...)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from totem.messages import Message, ReasoningPart, TextPart, ToolPart, Usage, new_id
from totem.providers.base import (
    AuthError,
    FatalError,
    InvalidRequest,
    ModelRequest,
    ProviderError,
    RateLimited,
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
from totem.providers.transport.eventstream import EventMessage

__all__ = [
    "ABORTED_OUTPUT",
    "ConverseStreamState",
    "decode",
    "exception_error",
    "finish",
    "from_wire",
    "to_wire",
]

ABORTED_OUTPUT = "[Aborted by user]"
Json = dict[str, Any]

# -- request ---------------------------------------------------------------------------------


def to_wire(
    request: ModelRequest, *, options: Mapping[str, Any] | None = None, provider: str = ""
) -> Json:
    """The Converse body for `request` (the model id goes in the URL, not here).

    Reasoning goes back only to the provider it came from (a message whose model label is
    `{provider}/...`), and only when signed: Claude checks the signature, and models that
    sign nothing do not want their reasoning back. Without tools in the request, earlier
    tool calls and results are sent as text (Converse refuses toolUse without toolConfig).
    """
    opts = {**(options or {}), **request.options}
    cache = opts.get("cache", True) is not False
    point: Json = {"type": "default"}
    if opts.get("cache_ttl"):
        point["ttl"] = str(opts["cache_ttl"])
    native = bool(request.tools)
    messages: list[Json] = []
    for message in request.messages:
        if message.role == "user":
            _append(messages, "user", _user_blocks(message))
            continue
        same = bool(provider) and (message.model or "").startswith(f"{provider}/")
        content, results = _assistant_blocks(message, native=native, reasoning=same)
        _append(messages, "assistant", content)
        _append(messages, "user", results)
    body: Json = {"messages": messages}
    if request.system:
        body["system"] = [{"text": request.system}]
        if cache:
            body["system"].append({"cachePoint": dict(point)})
    if request.tools:
        tools: list[Json] = [
            {"toolSpec": {"name": t.name, "description": t.description,
                          "inputSchema": {"json": t.parameters}}}
            for t in request.tools
        ]
        if cache:
            tools.append({"cachePoint": dict(point)})
        body["toolConfig"] = {"tools": tools}
    last_user = next((m for m in reversed(messages) if m["role"] == "user"), None)
    if cache and last_user is not None:
        last_user["content"].append({"cachePoint": dict(point)})
    inference: Json = {}
    if request.max_tokens is not None:
        inference["maxTokens"] = request.max_tokens
    if request.temperature is not None:
        inference["temperature"] = request.temperature
    if inference:
        body["inferenceConfig"] = inference
    extra = opts.get("extra_body")
    if isinstance(extra, Mapping):
        body.update(extra)
    return body


def _append(messages: list[Json], role: str, blocks: list[Json]) -> None:
    """Add `blocks` as a `role` message; Converse wants roles to alternate, so merge."""
    if not blocks:
        return
    if messages and messages[-1]["role"] == role:
        messages[-1]["content"].extend(blocks)
    else:
        messages.append({"role": role, "content": blocks})


def _user_blocks(message: Message) -> list[Json]:
    texts = [p.sent
             for p in message.parts if isinstance(p, TextPart)]
    blocks: list[Json] = [{"text": t} for t in texts if t]
    for image in (i for p in message.parts if isinstance(p, TextPart) for i in p.images):
        kind = image.media_type.rpartition("/")[2].lower()
        blocks.append({"image": {"format": "jpeg" if kind == "jpg" else kind,
                                 "source": {"bytes": image.data}}})
    return blocks


def _assistant_blocks(
    message: Message, *, native: bool, reasoning: bool
) -> tuple[list[Json], list[Json]]:
    """The assistant's content blocks, and the user blocks that carry its tool results."""
    content: list[Json] = []
    results: list[Json] = []
    for part in message.parts:
        if isinstance(part, ReasoningPart) and reasoning:
            if part.redacted_data:
                content.append({"reasoningContent": {"redactedContent": part.redacted_data}})
            elif part.signature:
                content.append({"reasoningContent": {"reasoningText": {
                    "text": part.text, "signature": part.signature}}})
        elif isinstance(part, TextPart) and part.text:
            content.append({"text": part.text})
        elif isinstance(part, ToolPart) and native and not part.from_text:
            content.append({"toolUse": {"toolUseId": part.call_id, "name": part.name,
                                        "input": _input(part)}})
            results.append({"toolResult": _result(part)})
        elif isinstance(part, ToolPart):
            if not part.from_text:  # a native call, told as text: no toolConfig this time
                args = json.dumps(_input(part), ensure_ascii=False)
                content.append({"text": f"(called the tool {part.name} with {args})"})
            results.append({"text": f"Result of {part.name}:\n{_output(part)}"})
    return content, results


def _input(part: ToolPart) -> Json:
    if isinstance(part.input, dict):
        return part.input
    try:
        parsed = json.loads(part.raw_input)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _output(part: ToolPart) -> str:
    return part.output if part.state in ("completed", "error") else ABORTED_OUTPUT


def _result(part: ToolPart) -> Json:
    output = _output(part)
    content: list[Json] = [{"text": output}] if output else []
    for image in part.images:
        kind = image.media_type.rpartition("/")[2].lower()
        content.append({"image": {"format": "jpeg" if kind == "jpg" else kind,
                                  "source": {"bytes": image.data}}})
    if not content:
        content = [{"text": "(no output)"}]  # Converse refuses an empty text block
    result: Json = {"toolUseId": part.call_id, "content": content}
    if part.state != "completed":
        result["status"] = "error"
    return result


# -- stream ----------------------------------------------------------------------------------


@dataclass(slots=True)
class ConverseStreamState:
    """What one stream has shown so far; `from_wire` updates it, `finish` reads it."""

    calls: dict[int, int] = field(default_factory=dict)  # contentBlockIndex -> call index
    stop_reason: str | None = None
    usage: Usage | None = None
    output: bool = False
    malformed: list[str] = field(default_factory=list)


_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}

_EXCEPTIONS: dict[str, type[ProviderError]] = {
    "throttlingException": RateLimited,
    "serviceUnavailableException": RetryableError,
    "internalServerException": RetryableError,
    "modelStreamErrorException": RetryableError,
    "modelTimeoutException": RetryableError,
    "modelNotReadyException": RetryableError,
    "validationException": InvalidRequest,
    "accessDeniedException": AuthError,
}


def exception_error(name: str, payload: Any) -> ProviderError:
    """The error for a Bedrock exception (`throttlingException` or `ThrottlingException`)."""
    key = name[:1].lower() + name[1:]
    message = payload.get("message") if isinstance(payload, dict) else None
    text = f"Bedrock {key}: {message or 'no message'}"
    return _EXCEPTIONS.get(key, FatalError)(text)


def from_wire(event_type: str, payload: Json, state: ConverseStreamState) -> list[StreamEvent]:
    """The events of one stream event; raises the classified error of an exception event."""
    block = payload.get("contentBlockIndex")
    events: list[StreamEvent] = []
    if event_type == "contentBlockStart":
        tool = (payload.get("start") or {}).get("toolUse")
        if isinstance(tool, dict) and isinstance(block, int):
            index = state.calls[block] = len(state.calls)
            call_id = str(tool.get("toolUseId") or new_id("call"))
            events.append(ToolCallBegin(index, call_id, str(tool.get("name") or "")))
    elif event_type == "contentBlockDelta":
        events = _delta(payload.get("delta") or {}, block, state)
    elif event_type == "messageStop":
        state.stop_reason = str(payload.get("stopReason") or "")
    elif event_type == "metadata":
        if isinstance(payload.get("usage"), dict):
            state.usage = _usage(payload["usage"])
    elif event_type.endswith("Exception") or event_type in _EXCEPTIONS:
        raise exception_error(event_type, payload)
    if events:
        state.output = True
    return events


def _delta(delta: Json, block: Any, state: ConverseStreamState) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    text = delta.get("text")
    if isinstance(text, str) and text:
        events.append(TextChunk(text))
    tool = delta.get("toolUse")
    if isinstance(tool, dict) and isinstance(tool.get("input"), str) and tool["input"]:
        if block in state.calls:
            events.append(ToolArgsChunk(state.calls[block], tool["input"]))
        else:
            state.malformed.append(f"toolUse input for unknown block {block!r}")
    reasoning = delta.get("reasoningContent")
    if isinstance(reasoning, dict):
        if isinstance(reasoning.get("text"), str) and reasoning["text"]:
            events.append(ReasoningChunk(reasoning["text"]))
        if reasoning.get("signature"):
            events.append(ReasoningChunk("", signature=str(reasoning["signature"])))
        if reasoning.get("redactedContent"):
            events.append(ReasoningChunk("", redacted_data=str(reasoning["redactedContent"])))
    return events


def finish(state: ConverseStreamState) -> list[StreamEvent]:
    """The end of a stream: usage, then exactly one StreamEnd.

    Raises `RetryableError` when the stream showed nothing, or ended without `messageStop`
    (Bedrock always sends one: its absence means the stream was cut).
    """
    if not state.output and state.stop_reason is None and state.usage is None:
        detail = f" ({state.malformed[0][:120]!r} could not be read)" if state.malformed else ""
        raise RetryableError(f"the stream ended before any output{detail}")
    if state.stop_reason is None:
        raise RetryableError("the stream was cut before its end (no messageStop)")
    events: list[StreamEvent] = []
    if state.usage is not None:
        events.append(UsageReport(state.usage))
    raw = state.stop_reason
    reason = _REASONS.get(raw, "other") if raw else "stop"
    if state.calls and reason == "stop":
        reason = "tool_calls"
    events.append(StreamEnd(reason, raw))
    return events


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _usage(data: Json) -> Usage:
    read = _int(data.get("cacheReadInputTokens"))
    write = _int(data.get("cacheWriteInputTokens"))
    return Usage(  # `input` counts every prompt token, those read from or written to cache too
        input=_int(data.get("inputTokens")) + read + write,
        output=_int(data.get("outputTokens")),
        cache_read=read,
        cache_write=write,
    )


def decode(message: EventMessage, state: ConverseStreamState) -> list[StreamEvent]:
    """The events of one event-stream message; a payload that is not JSON is remembered."""
    kind = message.message_type
    if kind == "error":
        raise exception_error(message.header(":error-code") or "unknownError",
                              {"message": message.header(":error-message")})
    try:
        payload = message.json()
    except ValueError:
        payload = None
    text = message.payload[:500].decode("utf-8", "replace")
    if kind == "exception":
        name = message.header(":exception-type") or "unknownException"
        raise exception_error(name, payload if isinstance(payload, dict) else {"message": text})
    if not isinstance(payload, dict):
        state.malformed.append(text)
        return []
    return from_wire(message.header(":event-type"), payload, state)
