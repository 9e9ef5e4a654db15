"""Gemini `generateContent` wire mapping, as pure functions.

`to_wire(request, options=..., provider=...)` is the body of
POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse; `from_wire(chunk, state)`
turns one streamed `GenerateContentResponse` into `StreamEvent`s and `finish(state)` closes
the stream. `gemini.py` adds HTTP. What the mapping keeps in mind:

- roles are `user` and `model`; the system prompt is `systemInstruction`; contents of the
  same role in a row are merged, so the conversation alternates;
- a tool call is a `functionCall {name, args}` part; its result a `functionResponse
  {name, response: {output}}` part (`{error}` for a failed tool) in the user content that
  follows, all results of one step together; images of a result follow as `inlineData`;
- `thoughtSignature` goes back on the very part it came with (text, thought or call), and
  only to the provider that issued it (`Message.model` is "provider/model"). In the current
  turn, a step whose calls carry no signature (another model made them) gets
  `signature_fill`, the value the Gemini docs give to skip the check (Gemini 3 rejects
  unsigned calls of the current turn);
- tool schemas are cut to the OpenAPI subset Gemini accepts: `$ref`s inlined, nulls as
  `nullable`, no `additionalProperties`, `default`, `title`, `$schema`, `examples`.

Options (provider configuration or request): `include_thoughts`, `thinking_budget`,
`thinking_level` (→ `thinkingConfig`, sent only when set: older models reject it),
`top_p`, `top_k`, `stop` (→ `stopSequences`), `safety_settings`, `generation_config`
(merged into `generationConfig`), `extra_body` (merged into the body), `signature_fill`
(default "skip_thought_signature_validator"; empty to send none).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
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
    ToolSpec,
    UsageReport,
)
from totem.providers.transport.retry import classify_status

__all__ = [
    "ABORTED_OUTPUT",
    "CALL_ID_PREFIX",
    "GeminiStreamState",
    "finish",
    "from_wire",
    "to_gemini_schema",
    "to_wire",
]

ABORTED_OUTPUT = "[Aborted by user]"
CALL_ID_PREFIX = "gcall_"  # ids totem made up for calls that came without one
SIGNATURE_FILL = "skip_thought_signature_validator"
Json = dict[str, Any]

# -- request ---------------------------------------------------------------------------------


def to_wire(
    request: ModelRequest,
    *,
    options: Mapping[str, Any] | None = None,
    provider: str | None = None,
) -> Json:
    """The request body for `request`; `request.options` override `options`.

    `provider` is the name of the configured provider: signatures and call ids go back
    only on messages whose `model` is "<provider>/..." (with None, on every message).
    """
    opts = {**(options or {}), **request.options}
    contents: list[Json] = []
    turn = 0  # where the current turn (since the last user message) starts
    for message in request.messages:
        if message.role == "user":
            turn = len(contents)
            contents += _user_contents(message)
        else:
            contents += _assistant_contents(message, _same_source(message, provider))
    fill = opts.get("signature_fill", SIGNATURE_FILL)
    if isinstance(fill, str) and fill:
        _fill_signatures(contents[turn:], fill)
    contents = _merged(contents)
    body: Json = {"contents": contents}
    if request.system:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}
    if request.tools:
        body["tools"] = [{"functionDeclarations": [_declaration(t) for t in request.tools]}]
    config = _generation_config(request, opts)
    if config:
        body["generationConfig"] = config
    if opts.get("safety_settings"):
        body["safetySettings"] = opts["safety_settings"]
    extra = opts.get("extra_body")
    if isinstance(extra, Mapping):
        body.update(extra)
    return body


def _same_source(message: Message, provider: str | None) -> bool:
    if provider is None:
        return True
    return (message.model or "").partition("/")[0] == provider


def _user_contents(message: Message) -> list[Json]:
    texts = [p.sent
             for p in message.parts if isinstance(p, TextPart)]
    parts: list[Json] = [{"text": text} for text in texts if text]
    parts += [{"inlineData": {"mimeType": i.media_type, "data": i.data}}
              for p in message.parts if isinstance(p, TextPart) for i in p.images]
    return [{"role": "user", "parts": parts}] if parts else []


@dataclass(slots=True)
class _Step:
    """Model parts of one step and the user parts that answer its calls."""

    model: list[Json] = field(default_factory=list)
    responses: list[Json] = field(default_factory=list)
    extra: list[Json] = field(default_factory=list)  # images and results of text calls

    def close(self, into: list[Json]) -> None:
        if self.model:
            into.append({"role": "model", "parts": self.model})
        if self.responses or self.extra:
            into.append({"role": "user", "parts": self.responses + self.extra})
        self.model, self.responses, self.extra = [], [], []


def _assistant_contents(message: Message, same: bool) -> list[Json]:
    out: list[Json] = []
    step = _Step()
    for part in message.parts:
        if isinstance(part, ToolPart):
            _tool(part, step, same)
            continue
        wire = _model_part(part, same) if isinstance(part, TextPart | ReasoningPart) else None
        if wire is None:
            continue
        if step.responses or step.extra:  # text after results: a later step
            step.close(out)
        step.model.append(wire)
    step.close(out)
    return out


def _model_part(part: TextPart | ReasoningPart, same: bool) -> Json | None:
    signature = part.signature if same else None
    if isinstance(part, ReasoningPart):
        # Gemini reads nothing from unsigned thought text; signed, it goes back whole.
        if not signature or part.redacted_data is not None:
            return None
        return {"text": part.text, "thought": True, "thoughtSignature": signature}
    if not part.text and not signature:
        return None
    wire: Json = {"text": part.text}
    if signature:
        wire["thoughtSignature"] = signature
    return wire


def _tool(part: ToolPart, step: _Step, same: bool) -> None:
    output = part.output if part.state in ("completed", "error") else ABORTED_OUTPUT
    if part.from_text:  # the call is in the text already; its result goes back as text
        step.extra.append({"text": f"Result of {part.name}:\n{output}"})
        return
    call: Json = {"name": part.name, "args": _arguments(part)}
    response: Json = {
        "name": part.name,
        "response": {"error" if part.state == "error" else "output": output},
    }
    if same and part.call_id and not part.call_id.startswith(CALL_ID_PREFIX):
        call["id"] = response["id"] = part.call_id
    wire: Json = {"functionCall": call}
    if same and part.signature:
        wire["thoughtSignature"] = part.signature
    step.model.append(wire)
    step.responses.append({"functionResponse": response})
    if part.images:
        step.extra.append({"text": f"Images from {part.name}:"})
        step.extra += [
            {"inlineData": {"mimeType": i.media_type, "data": i.data}} for i in part.images
        ]


def _arguments(part: ToolPart) -> Json:
    if isinstance(part.input, dict):
        return dict(part.input)
    try:
        parsed = json.loads(part.raw_input or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _merged(contents: list[Json]) -> list[Json]:
    out: list[Json] = []
    for content in contents:
        if out and out[-1]["role"] == content["role"]:
            out[-1]["parts"] = out[-1]["parts"] + content["parts"]
        else:
            out.append({"role": content["role"], "parts": list(content["parts"])})
    # A result's images and texts follow every functionResponse of its content.
    for content in out:
        if content["role"] == "user":
            parts = content["parts"]
            content["parts"] = [p for p in parts if "functionResponse" in p] + [
                p for p in parts if "functionResponse" not in p
            ]
    return out


def _fill_signatures(contents: list[Json], fill: str) -> None:
    """Give the first call of each unsigned step `fill` (Gemini 3 checks the current turn)."""
    for content in contents:
        calls = [p for p in content["parts"] if "functionCall" in p]
        if calls and not any("thoughtSignature" in p for p in calls):
            calls[0]["thoughtSignature"] = fill


def _generation_config(request: ModelRequest, opts: Mapping[str, Any]) -> Json:
    config: Json = {}
    if request.max_tokens is not None:
        config["maxOutputTokens"] = request.max_tokens
    temperature = request.temperature if request.temperature is not None else opts.get(
        "temperature")
    if temperature is not None:
        config["temperature"] = temperature
    for name, wire in (("top_p", "topP"), ("top_k", "topK")):
        if opts.get(name) is not None:
            config[wire] = opts[name]
    stop = opts.get("stop")
    if stop:
        config["stopSequences"] = [stop] if isinstance(stop, str) else list(stop)
    thinking: Json = {}
    for name, wire in (("include_thoughts", "includeThoughts"),
                       ("thinking_budget", "thinkingBudget"),
                       ("thinking_level", "thinkingLevel")):
        if opts.get(name) is not None:
            thinking[wire] = opts[name]
    if thinking:
        config["thinkingConfig"] = thinking
    extra = opts.get("generation_config")
    if isinstance(extra, Mapping):
        config.update(extra)
    return config


def _declaration(tool: ToolSpec) -> Json:
    declaration: Json = {"name": tool.name, "description": tool.description}
    schema = to_gemini_schema(tool.parameters)
    if schema.get("properties"):  # Gemini rejects an OBJECT with empty properties
        declaration["parameters"] = schema
    return declaration


# -- JSON schema -> Gemini's OpenAPI subset ----------------------------------------------------

_TYPES = {"string", "number", "integer", "boolean", "object", "array"}
_COPIED = ("description", "minimum", "maximum", "minItems", "maxItems", "minLength",
           "maxLength", "pattern", "minProperties", "maxProperties")
_FORMATS = {"string": {"enum", "date-time"}, "integer": {"int32", "int64"},
            "number": {"float", "double"}}


def to_gemini_schema(schema: Mapping[str, Any]) -> Json:
    """`schema` (JSON Schema, as pydantic writes it) in the subset Gemini accepts."""
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    return _schema(schema, defs, ())


def _schema(node: Any, defs: Mapping[str, Any], seen: tuple[str, ...]) -> Json:
    if not isinstance(node, Mapping):
        return {"type": "STRING"}
    node, seen = _resolved(node, defs, seen)
    if "$ref" in node:  # recursive or unknown: Gemini cannot say it, keep the shape
        return {"type": "OBJECT", **_copied(node)}
    variants, nullable = _variants(node)
    if len(variants) > 1:
        out: Json = {"anyOf": [_schema(v, defs, seen) for v in variants], **_copied(node)}
        return {**out, "nullable": True} if nullable else out
    if variants and isinstance(variants[0], Mapping):  # one real type: flatten it in
        inner, seen = _resolved(variants[0], defs, seen)
        node = {**inner, **{k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}}
    kind = _kind(node)
    out = {"type": kind.upper(), **_copied(node)}
    if nullable or node.get("nullable") is True:
        out["nullable"] = True
    fmt = node.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS.get(kind, ()):
        out["format"] = fmt
    enum = node.get("enum", [node["const"]] if "const" in node else None)
    if isinstance(enum, list) and enum:  # Gemini's enums are strings
        out.update(type="STRING", enum=[str(v) for v in enum if v is not None])
        out.pop("format", None)
    elif kind == "object":
        props = node.get("properties")
        if isinstance(props, Mapping) and props:
            out["properties"] = {str(k): _schema(v, defs, seen) for k, v in props.items()}
            required = [r for r in node.get("required") or () if r in props]
            if required:
                out["required"] = required
    elif kind == "array":
        out["items"] = _schema(node.get("items") or {"type": "string"}, defs, seen)
    return out


def _resolved(
    node: Mapping[str, Any], defs: Mapping[str, Any], seen: tuple[str, ...]
) -> tuple[Json, tuple[str, ...]]:
    """`node` with its `$ref` (and a one-item `allOf`) replaced by what they point to, and
    the definitions followed on the way (a `$ref` to one of them stays: it is recursive)."""
    out = dict(node)
    all_of = out.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
        del out["allOf"]
        out = {**all_of[0], **out}
    ref = out.get("$ref")
    if not isinstance(ref, str):
        return out, seen
    name = ref.rsplit("/", 1)[-1]
    target = defs.get(name)
    if name in seen or not isinstance(target, Mapping):
        return out, seen
    inner, seen = _resolved(target, defs, (*seen, name))
    return {**inner, **{k: v for k, v in out.items() if k != "$ref"}}, seen


def _variants(node: Mapping[str, Any]) -> tuple[list[Any], bool]:
    """The non-null alternatives of `anyOf` / `oneOf` / a type list, and whether null is one."""
    options = node.get("anyOf") or node.get("oneOf")
    if isinstance(options, list):
        real = [o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")]
        return real, len(real) < len(options)
    kind = node.get("type")
    if isinstance(kind, list):
        real = [{"type": k} for k in kind if k != "null"]
        return (real if len(real) > 1 else []), "null" in kind
    return [], False


def _kind(node: Mapping[str, Any]) -> str:
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if isinstance(kind, str) and kind in _TYPES:
        return kind
    if "properties" in node:
        return "object"
    if "items" in node:
        return "array"
    return "string"


def _copied(node: Mapping[str, Any]) -> Json:
    return {k: node[k] for k in _COPIED if k in node}


# -- stream ----------------------------------------------------------------------------------


@dataclass(slots=True)
class GeminiStreamState:
    """What one stream has shown so far; `from_wire` updates it, `finish` reads it."""

    calls: int = 0
    finish_reason: str | None = None
    usage: Usage | None = None
    output: bool = False
    malformed: list[str] = field(default_factory=list)


def from_wire(chunk: Json, state: GeminiStreamState) -> list[StreamEvent]:
    """The events of one streamed `GenerateContentResponse` (only candidate 0 is read)."""
    if chunk.get("error"):
        raise _stream_error(chunk["error"])
    if isinstance(chunk.get("usageMetadata"), dict):
        state.usage = _usage(chunk["usageMetadata"])
    feedback = chunk.get("promptFeedback")
    if isinstance(feedback, dict) and feedback.get("blockReason"):
        state.finish_reason = f"PROMPT_BLOCKED:{feedback['blockReason']}"
    candidates = chunk.get("candidates")
    candidate = candidates[0] if isinstance(candidates, list) and candidates else None
    if not isinstance(candidate, dict):
        return []
    events: list[StreamEvent] = []
    content = candidate.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, dict):
            events += _part_events(part, state)
    if candidate.get("finishReason"):
        state.finish_reason = str(candidate["finishReason"])
    if any(isinstance(e, ToolCallBegin) or getattr(e, "text", "") for e in events):
        state.output = True
    return events


def _part_events(part: Json, state: GeminiStreamState) -> list[StreamEvent]:
    signature = part.get("thoughtSignature")
    signature = signature if isinstance(signature, str) and signature else None
    call = part.get("functionCall")
    if isinstance(call, dict):
        index, state.calls = state.calls, state.calls + 1
        call_id = call.get("id")
        call_id = call_id if isinstance(call_id, str) and call_id else new_id(
            CALL_ID_PREFIX.rstrip("_"))
        args = call.get("args")
        return [
            ToolCallBegin(index, call_id, str(call.get("name") or ""), signature=signature),
            ToolArgsChunk(index, json.dumps(args if isinstance(args, dict) else {},
                                            ensure_ascii=False)),
        ]
    text = part.get("text")
    if not isinstance(text, str) or (not text and signature is None):
        return []  # inlineData, executableCode ... are not part of a coding answer
    if part.get("thought") is True:
        return [ReasoningChunk(text, signature=signature)]
    return [TextChunk(text, signature=signature)]


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _usage(data: Json) -> Usage:
    thoughts = _int(data.get("thoughtsTokenCount"))
    return Usage(  # `input` includes cached tokens, as Gemini (and OpenAI) count them
        input=_int(data.get("promptTokenCount")) + _int(data.get("toolUsePromptTokenCount")),
        output=_int(data.get("candidatesTokenCount")) + thoughts,
        cache_read=_int(data.get("cachedContentTokenCount")),
        reasoning=thoughts,
    )


_REASONS: dict[str, StopReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "FUNCTION_CALL": "tool_calls",  # not a Gemini value; simulators send it
}


def finish(state: GeminiStreamState) -> list[StreamEvent]:
    """The end of a stream: usage, then exactly one StreamEnd.

    Raises `RetryableError` when the stream showed nothing (no output, no finish reason, no
    usage), or when the model's only output was a malformed function call: another try
    usually gets a good one.
    """
    if not state.output and state.finish_reason is None and state.usage is None:
        if state.malformed:
            raise RetryableError(
                f"malformed stream: {len(state.malformed)} chunk(s) could not be read "
                f"(first: {state.malformed[0][:120]!r})"
            )
        raise RetryableError("the stream ended before any output")
    raw = state.finish_reason or ""
    if raw == "MALFORMED_FUNCTION_CALL" and not state.output:
        raise RetryableError("the model wrote a malformed function call (MALFORMED_FUNCTION_CALL)")
    events: list[StreamEvent] = []
    if state.usage is not None:
        events.append(UsageReport(state.usage))
    reason = _REASONS.get(raw, "other") if raw else "stop"
    if state.calls and reason == "stop":
        reason = "tool_calls"
    events.append(StreamEnd(reason, raw))
    return events


def _stream_error(error: Any) -> ProviderError:
    """An `{"error": {...}}` object sent inside a stream."""
    if isinstance(error, dict):
        message = str(error.get("message") or error)
        if error.get("status"):
            message = f"{error['status']}: {message}"
        code = error.get("code")
        if isinstance(code, int) and 400 <= code < 600:
            return classify_status(code, f"error in stream: {message}")
        return RetryableError(f"error in stream: {message}")
    return RetryableError(f"error in stream: {error}")
