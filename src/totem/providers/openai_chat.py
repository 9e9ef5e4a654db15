"""OpenAI chat completions: the adapter for every OpenAI-compatible server.

Pure functions hold the mapping (tests call them directly): `to_wire(request)` is the body
of POST {base_url}/chat/completions, `from_wire(chunk, state)` the events of one stream
chunk, `finish(state)` the closing UsageReport and StreamEnd. `OpenAIChatProvider` adds
HTTP (`http.HttpProvider`: httpx, SSE from `sse.py`, every failure turned into the errors
of `base.py`); it never retries (`retry.py` does). Options, from the provider's
configuration or the request:

    send_reasoning    send earlier reasoning back as `reasoning_content` (default false)
    include_usage     ask for a usage chunk with `stream_options` (default true)
    max_tokens_field  `max_tokens` (default) or `max_completion_tokens`
    extra_body        a dict merged into the request body (e.g. `num_ctx` for a gateway);
                      the request's own is merged after the provider's, key by key
    response_format   sent as it is (constrained tool calls: `stepmode.py`)
    stream            false: ask for one whole answer instead of a stream

The API key is sent as a Bearer token only when one is set, and appears in no message and
no repr.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from totem.messages import Message, ReasoningPart, TextPart, ToolPart, Usage, new_id
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
from totem.providers.transport.http import (
    HttpProvider,
    json_body,
    json_object,
    json_or_none,
    json_stream,
    not_a_stream,
    or_whole_answer,
    sse_data,
)
from totem.providers.transport.retry import classify_status

__all__ = ["ABORTED_OUTPUT", "ChatStreamState", "OpenAIChatProvider", "finish", "from_wire",
           "to_wire", "user_to_wire"]

ABORTED_OUTPUT = "[Aborted by user]"
Json = dict[str, Any]

# -- request ---------------------------------------------------------------------------------


def to_wire(request: ModelRequest, *, options: Mapping[str, Any] | None = None) -> Json:
    """The chat completions body for `request`; `request.options` override `options`."""
    opts = {**(options or {}), **request.options}
    messages: list[Json] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        if message.role == "user":
            messages.extend(user_to_wire(message))
        else:
            messages.extend(_assistant_to_wire(message, bool(opts.get("send_reasoning"))))
    streamed = opts.get("stream") is not False
    body: Json = {"model": request.model, "messages": messages, "stream": streamed}
    if streamed and opts.get("include_usage", True):
        body["stream_options"] = {"include_usage": True}
    if request.tools:
        body["tools"] = [
            {"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.parameters}}
            for t in request.tools
        ]
    if request.max_tokens is not None:
        body[str(opts.get("max_tokens_field") or "max_tokens")] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if isinstance(opts.get("response_format"), Mapping):
        body["response_format"] = opts["response_format"]
    for extra in ((options or {}).get("extra_body"), request.options.get("extra_body")):
        if isinstance(extra, Mapping):  # the provider's, then the request's own
            body.update(extra)
    return body


def user_to_wire(message: Message) -> list[Json]:
    """A user message as chat APIs take it (OpenAI's and Ollama's alike): its texts joined;
    attached images as `image_url` parts after them."""
    texts = [p.sent for p in message.parts if isinstance(p, TextPart)]
    images = [i for p in message.parts if isinstance(p, TextPart) for i in p.images]
    if not texts:
        return []
    if not images:
        return [{"role": "user", "content": "\n\n".join(texts)}]
    content: list[Json] = [{"type": "text", "text": "\n\n".join(texts)}]
    content += [{"type": "image_url", "image_url": {"url": f"data:{i.media_type};base64,{i.data}"}}
                for i in images]
    return [{"role": "user", "content": content}]


def _assistant_to_wire(message: Message, send_reasoning: bool) -> list[Json]:
    text = "\n\n".join(p.text for p in message.parts if isinstance(p, TextPart) and p.text)
    tools = [p for p in message.parts if isinstance(p, ToolPart)]
    native = [p for p in tools if not p.from_text]
    out: Json = {"role": "assistant", "content": text or None}
    reasoning = "".join(p.text for p in message.parts if isinstance(p, ReasoningPart))
    if send_reasoning and reasoning:
        out["reasoning_content"] = reasoning
    if native:
        out["tool_calls"] = [
            {"id": p.call_id, "type": "function",
             "function": {"name": p.name, "arguments": _arguments(p)}}
            for p in native
        ]
    result: list[Json] = [out] if text or native else []
    images: list[Json] = []
    for part in native:
        result.append({"role": "tool", "tool_call_id": part.call_id, "content": _output(part)})
        if part.images:
            images.append({"type": "text", "text": f"Images from {part.name} ({part.call_id}):"})
            images += [
                {"type": "image_url", "image_url": {"url": f"data:{i.media_type};base64,{i.data}"}}
                for i in part.images
            ]
    if images:
        result.append({"role": "user", "content": images})
    # A call the model wrote as text is already in `text`; its result goes back as text too.
    written = [f"Result of {p.name}:\n{_output(p)}" for p in tools if p.from_text]
    if written:
        result.append({"role": "user", "content": "\n\n".join(written)})
    return result


def _arguments(part: ToolPart) -> str:
    try:
        if isinstance(json.loads(part.raw_input), dict):
            return part.raw_input
    except ValueError:
        pass
    return json.dumps(part.input or {}, ensure_ascii=False)


def _output(part: ToolPart) -> str:
    return part.output if part.state in ("completed", "error") else ABORTED_OUTPUT


# -- stream ----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Call:
    index: int
    call_id: str
    real_id: bool = False
    name: str = ""
    begun: bool = False
    pending: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ChatStreamState:
    """What one stream has shown so far; `from_wire` updates it, `finish` reads it."""

    calls: list[_Call] = field(default_factory=list)
    by_wire_index: dict[int, _Call] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage | None = None
    output: bool = False
    malformed: list[str] = field(default_factory=list)
    done: bool = False  # the stream's `[DONE]` came, or the answer was one whole document

    def end(self) -> None:
        self.done = True


def from_wire(chunk: Json, state: ChatStreamState) -> list[StreamEvent]:
    """The events of one chunk (`choices[].delta`, or `.message` of a whole answer)."""
    error = chunk.get("error")
    if error:
        raise _stream_error(error)
    if isinstance(chunk.get("usage"), dict):
        state.usage = _usage(chunk["usage"])
    events: list[StreamEvent] = []
    for choice in chunk.get("choices") or []:
        if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
            continue
        delta = choice.get("delta") or choice.get("message") or {}
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            events.append(ReasoningChunk(reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            events.append(TextChunk(content))
        for call in delta.get("tool_calls") or []:
            if isinstance(call, dict):
                events += _tool_delta(call, state)
        if choice.get("finish_reason"):
            state.finish_reason = str(choice["finish_reason"])
    if events:
        state.output = True
    return events


def _tool_delta(delta: Json, state: ChatStreamState) -> list[StreamEvent]:
    wire_index = delta.get("index")
    call_id = delta.get("id") or ""
    function = delta.get("function") or {}
    name = function.get("name") or ""
    args = function.get("arguments")
    if isinstance(args, dict):
        args = json.dumps(args, ensure_ascii=False)
    if isinstance(wire_index, int):
        call = state.by_wire_index.get(wire_index)
        # Some servers number every call 0; a second real id means a second call.
        if call is not None and call_id and call.real_id and call_id != call.call_id:
            call = None
    elif call_id:  # no index: an unseen id starts a call
        call = next((c for c in state.calls if c.call_id == call_id), None)
    else:
        call = state.calls[-1] if state.calls else None
    if call is None:
        call = _Call(len(state.calls), call_id or new_id("call"), real_id=bool(call_id))
        state.calls.append(call)
        if isinstance(wire_index, int):
            state.by_wire_index[wire_index] = call
    elif call_id and not call.real_id and not call.begun:
        call.call_id, call.real_id = call_id, True
    events: list[StreamEvent] = []
    if name and not call.name:
        call.name = name
    if isinstance(args, str) and args:
        call.pending.append(args)
    if call.name and not call.begun:
        call.begun = True
        events.append(ToolCallBegin(call.index, call.call_id, call.name))
    if call.begun and call.pending:
        events.append(ToolArgsChunk(call.index, "".join(call.pending)))
        call.pending.clear()
    return events


_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "eos": "stop",
    "end_turn": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
}


def finish(state: ChatStreamState) -> list[StreamEvent]:
    """The end of a stream: usage, then exactly one StreamEnd.

    Raises `RetryableError` when the stream showed nothing at all (no output, no finish
    reason, no usage): an empty or malformed stream is worth another try; and when it
    stopped with neither a finish reason nor `[DONE]`: a connection closed mid-answer.
    """
    if not state.output and state.finish_reason is None and state.usage is None:
        if state.malformed:
            raise RetryableError(
                f"malformed stream: {len(state.malformed)} chunk(s) could not be read "
                f"(first: {state.malformed[0][:120]!r})"
            )
        raise RetryableError("the stream ended before any output")
    if state.finish_reason is None and not state.done:
        raise RetryableError("the stream ended mid-answer (no finish reason, no [DONE])")
    events: list[StreamEvent] = []
    for call in state.calls:
        if not call.begun:
            events.append(ToolCallBegin(call.index, call.call_id, call.name))
            if call.pending:
                events.append(ToolArgsChunk(call.index, "".join(call.pending)))
    if state.usage is not None:
        events.append(UsageReport(state.usage))
    raw = state.finish_reason or ""
    reason = _REASONS.get(raw, "other") if raw else "stop"
    if state.calls and reason == "stop":
        reason = "tool_calls"
    events.append(StreamEnd(reason, raw))
    return events


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _usage(data: Json) -> Usage:
    prompt = data.get("prompt_tokens_details") or {}
    completion = data.get("completion_tokens_details") or {}
    cached = _int(prompt.get("cached_tokens")) or _int(data.get("prompt_cache_hit_tokens"))
    return Usage(  # `input` includes the tokens read from cache, as OpenAI counts them
        input=_int(data.get("prompt_tokens")),
        output=_int(data.get("completion_tokens")),
        cache_read=cached,
        reasoning=_int(completion.get("reasoning_tokens")),
    )


def _stream_error(error: Any) -> ProviderError:
    if isinstance(error, dict):
        message = str(error.get("message") or error)
        code = error.get("code")
        if isinstance(code, int) and 400 <= code < 600:
            return classify_status(code, f"error in stream: {message}")
        return RetryableError(f"error in stream: {message}")
    return RetryableError(f"error in stream: {error}")


# -- HTTP ------------------------------------------------------------------------------------


class OpenAIChatProvider(HttpProvider):
    """A configured OpenAI-compatible server: base URL, optional key, headers, options."""

    connect_hint = "; is the server running?"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        body = json_body(to_wire(request, options=self.options))
        async with self._post_stream(f"{self.base_url}/chat/completions", body) as response:
            state = ChatStreamState()
            chunks = sse_data(response, until="[DONE]", on_until=state.end)
            streamed = json_stream(chunks, state, from_wire, finish)
            async for event in or_whole_answer(response, streamed, _whole_answer):
                yield event

    async def list_models(self) -> list[str]:
        """The ids that GET {base_url}/models lists."""
        response = await self._get(f"{self.base_url}/models")
        data = json_object(response, "model list from the server").get("data") or []
        return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]


def _whole_answer(body: bytes) -> list[StreamEvent]:
    """A server that answered with one JSON document instead of a stream."""
    data = json_or_none(body)
    if not isinstance(data, dict) or not ("choices" in data or "error" in data):
        raise not_a_stream(body)
    state = ChatStreamState(done=True)
    return from_wire(data, state) + finish(state)
