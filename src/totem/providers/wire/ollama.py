"""Ollama's native chat API (`POST /api/chat`, NDJSON stream), as pure functions.

`to_wire(request, options=..., context_limit=..., floor=...)` is the request body;
`from_wire(chunk, state)` the events of one NDJSON line; `finish(state)` closes the stream.

Why native and not Ollama's OpenAI endpoint: only here can `options.num_ctx` be set, and
Ollama's default window (2048 or 4096 tokens) silently cuts the start of a longer prompt,
which is where the system prompt and the tool definitions are. `num_ctx` is sized from the
request itself (`estimate_num_ctx`): the JSON of messages and tools at 3.5 characters a
token, plus room for the answer, times a margin, rounded up to a multiple of 2048, at least
`min_num_ctx`, at most the model's own context length (from `/api/show`) or `max_num_ctx`.
Changing `num_ctx` makes Ollama reload the model, so the provider passes the last size as
`floor`: a conversation only ever grows its window.

Options (provider configuration or request):

    num_ctx          "auto" (default) or a fixed number of tokens
    min_num_ctx      smallest window sent (default 4096)
    max_num_ctx      largest window sent (default: the model's context length, if known)
    num_ctx_margin   the margin over the estimate (default 1.25)
    answer_tokens    room for the answer when max_tokens is not set (default 4096)
    think            true | false | "low" | "medium" | "high" -> the request's `think`
    keep_alive       how long Ollama keeps the model loaded ("5m", 3600, -1 ...)
    temperature, repeat_penalty, top_p, top_k, min_p, seed, num_predict -> `options`
    ollama_options   a dict merged into `options`;  extra_body: merged into the body
    send_reasoning   send earlier thinking back as `thinking` (default false)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from totem.messages import Message, ReasoningPart, TextPart, ToolPart, Usage, new_id
from totem.providers.base import (
    ModelRequest,
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
from totem.providers.openai_chat import user_to_wire

__all__ = [
    "ABORTED_OUTPUT",
    "CTX_STEP",
    "OllamaStreamState",
    "estimate_num_ctx",
    "finish",
    "from_wire",
    "to_wire",
]

ABORTED_OUTPUT = "[Aborted by user]"
CHARS_PER_TOKEN = 3.5
CTX_STEP = 2048
MIN_NUM_CTX = 4096
ANSWER_TOKENS = 4096
MARGIN = 1.25
_PASSED = ("temperature", "repeat_penalty", "top_p", "top_k", "min_p", "seed", "num_predict")
Json = dict[str, Any]

# -- request ---------------------------------------------------------------------------------


def _user(message: Message) -> list[Json]:
    """Ollama takes a message's images as a list of base64 strings beside its content."""
    images = [i.data for p in message.parts if isinstance(p, TextPart) for i in p.images]
    texts = [p.sent for p in message.parts if isinstance(p, TextPart)]
    if not images:
        return user_to_wire(message)
    return [{"role": "user", "content": "\n\n".join(texts), "images": images}]


def to_wire(
    request: ModelRequest,
    *,
    options: Mapping[str, Any] | None = None,
    context_limit: int | None = None,
    floor: int | None = None,
) -> Json:
    """The /api/chat body; `request.options` override `options`.

    `context_limit` is the model's largest window (from /api/show), `floor` the window
    sent last time for this model; both only matter when `num_ctx` is "auto".
    """
    opts = {**(options or {}), **request.options}
    messages: list[Json] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        if message.role == "user":
            messages += _user(message)
        else:
            messages += _assistant(message, bool(opts.get("send_reasoning")))
    body: Json = {"model": request.model, "messages": messages, "stream": True}
    if request.tools:
        body["tools"] = [
            {"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.parameters}}
            for t in request.tools
        ]
    if opts.get("think") is not None:
        body["think"] = opts["think"]
    if opts.get("keep_alive") is not None:
        body["keep_alive"] = opts["keep_alive"]
    if opts.get("format") is not None:  # a JSON schema the answer must follow
        body["format"] = opts["format"]
    body["options"] = _model_options(request, opts)
    body["options"]["num_ctx"] = _num_ctx(body, request, opts, context_limit, floor)
    extra = opts.get("extra_body")
    if isinstance(extra, Mapping):
        body.update(extra)
    return body


def _model_options(request: ModelRequest, opts: Mapping[str, Any]) -> Json:
    out: Json = {name: opts[name] for name in _PASSED if opts.get(name) is not None}
    if request.temperature is not None:
        out["temperature"] = request.temperature
    if request.max_tokens is not None:
        out["num_predict"] = request.max_tokens
    extra = opts.get("ollama_options")
    if isinstance(extra, Mapping):
        out.update(extra)
    return out


def _num_ctx(
    body: Json,
    request: ModelRequest,
    opts: Mapping[str, Any],
    context_limit: int | None,
    floor: int | None,
) -> int:
    fixed = opts.get("num_ctx")
    if isinstance(fixed, int) and not isinstance(fixed, bool) and fixed > 0:
        return fixed
    predict = body["options"].get("num_predict")
    answer = predict if isinstance(predict, int) and predict > 0 else int(
        opts.get("answer_tokens") or ANSWER_TOKENS)
    caps = [c for c in (context_limit, _positive(opts.get("max_num_ctx"))) if c]
    return estimate_num_ctx(
        body,
        answer=answer,
        margin=float(opts.get("num_ctx_margin") or MARGIN),
        minimum=_positive(opts.get("min_num_ctx")) or MIN_NUM_CTX,
        cap=min(caps) if caps else None,
        floor=floor,
    )


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def estimate_num_ctx(
    body: Mapping[str, Any],
    *,
    answer: int = ANSWER_TOKENS,
    margin: float = MARGIN,
    minimum: int = MIN_NUM_CTX,
    cap: int | None = None,
    floor: int | None = None,
) -> int:
    """The window for `body`: (prompt estimate + `answer`) x `margin`, rounded up to a
    multiple of 2048, at least `minimum` and `floor`, at most `cap` (which wins)."""
    sized = {k: body[k] for k in ("messages", "tools") if k in body}
    prompt = math.ceil(len(json.dumps(sized, ensure_ascii=False)) / CHARS_PER_TOKEN)
    size = math.ceil((prompt + max(answer, 0)) * margin / CTX_STEP) * CTX_STEP
    size = max(size, minimum, floor or 0)
    return min(size, cap) if cap else size



def _assistant(message: Message, send_reasoning: bool) -> list[Json]:
    out: list[Json] = []
    current: Json = {}
    after: list[Json] = []  # tool results of the calls in `current`

    def close() -> None:
        nonlocal current, after
        if current.get("content") or current.get("tool_calls") or current.get("thinking"):
            out.append({"role": "assistant", "content": "", **current})
        out.extend(after)
        current, after = {}, []

    for part in message.parts:
        if isinstance(part, TextPart | ReasoningPart):
            if after:  # text after results: a later step
                close()
            key = "content" if isinstance(part, TextPart) else "thinking"
            if part.text and (key == "content" or send_reasoning):
                current[key] = current[key] + part.text if current.get(key) else part.text
        elif isinstance(part, ToolPart):
            output = part.output if part.state in ("completed", "error") else ABORTED_OUTPUT
            if part.from_text:
                after.append({"role": "user", "content": f"Result of {part.name}:\n{output}"})
                continue
            call = {"function": {"name": part.name, "arguments": _arguments(part)}}
            current.setdefault("tool_calls", []).append(call)
            after.append({"role": "tool", "content": output, "tool_name": part.name})
            if part.images:
                after.append({"role": "user", "content": f"Images from {part.name}:",
                              "images": [i.data for i in part.images]})
    close()
    # All results first, then the images and text results of the step.
    return _results_first(out)


def _results_first(messages: list[Json]) -> list[Json]:
    out: list[Json] = []
    tail: list[Json] = []
    for message in messages:
        if message["role"] == "tool":
            out.append(message)
        elif message["role"] == "user":
            tail.append(message)
        else:
            out += tail
            tail = []
            out.append(message)
    return out + tail


def _arguments(part: ToolPart) -> Json:
    if isinstance(part.input, dict):
        return dict(part.input)
    try:
        parsed = json.loads(part.raw_input or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


# -- stream ----------------------------------------------------------------------------------


@dataclass(slots=True)
class OllamaStreamState:
    """What one stream has shown so far; `from_wire` updates it, `finish` reads it."""

    calls: int = 0
    done: bool = False
    done_reason: str | None = None
    usage: Usage | None = None
    output: bool = False
    malformed: list[str] = field(default_factory=list)


def from_wire(chunk: Json, state: OllamaStreamState) -> list[StreamEvent]:
    """The events of one NDJSON line of /api/chat."""
    error = chunk.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        raise RetryableError(f"error in stream: {message or error}")
    events: list[StreamEvent] = []
    message = chunk.get("message")
    if isinstance(message, dict):
        # Ollama says `thinking`; simulators and some proxies `reasoning_content`.
        for key in ("thinking", "reasoning_content", "reasoning"):
            value = message.get(key)
            if isinstance(value, str) and value:
                events.append(ReasoningChunk(value))
                break
        content = message.get("content")
        if isinstance(content, str) and content:
            events.append(TextChunk(content))
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict):
                events += _call(call, state)
    if chunk.get("done") is True:
        state.done = True
        state.done_reason = str(chunk.get("done_reason") or "stop")
        if "prompt_eval_count" in chunk or "eval_count" in chunk:
            state.usage = Usage(input=_int(chunk.get("prompt_eval_count")),
                                output=_int(chunk.get("eval_count")))
    if events:
        state.output = True
    return events


def _call(call: Json, state: OllamaStreamState) -> list[StreamEvent]:
    """Ollama sends each call whole, with no id (newer versions may add one)."""
    function = call.get("function")
    if not isinstance(function, dict):
        return []
    index, state.calls = state.calls, state.calls + 1
    call_id = call.get("id")
    call_id = call_id if isinstance(call_id, str) and call_id else new_id("call")
    args = function.get("arguments")
    text = args if isinstance(args, str) else json.dumps(
        args if isinstance(args, dict) else {}, ensure_ascii=False)
    return [ToolCallBegin(index, call_id, str(function.get("name") or "")),
            ToolArgsChunk(index, text)]


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


_REASONS: dict[str, StopReason] = {"stop": "stop", "length": "length"}


def finish(state: OllamaStreamState) -> list[StreamEvent]:
    """The end of a stream: usage, then exactly one StreamEnd.

    Raises `RetryableError` when the stream ended without its `done` line: before any
    output that is worth another try; after output the loop asks again, the cut answer
    kept apart as interrupted.
    """
    if not state.done:
        if state.malformed and not state.output:
            raise RetryableError(
                f"malformed stream: {len(state.malformed)} line(s) could not be read "
                f"(first: {state.malformed[0][:120]!r})"
            )
        raise RetryableError(
            "the stream ended before its last line" if state.output
            else "the stream ended before any output"
        )
    events: list[StreamEvent] = []
    if state.usage is not None:
        events.append(UsageReport(state.usage))
    raw = state.done_reason or "stop"
    reason = _REASONS.get(raw, "other")
    if state.calls and reason == "stop":
        reason = "tool_calls"
    events.append(StreamEnd(reason, raw))
    return events
