"""The Gemini wire mapping, as pure functions: requests built, stream chunks read."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from totem.messages import ImageBlock, Message, ReasoningPart, TextPart, ToolPart, Usage
from totem.providers.base import (
    InvalidRequest,
    ModelRequest,
    RateLimited,
    ReasoningChunk,
    RetryableError,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
    ToolSpec,
    UsageReport,
)
from totem.providers.wire.gemini import (
    GeminiStreamState,
    finish,
    from_wire,
    to_gemini_schema,
    to_wire,
)

Json = dict[str, Any]
FILL = "skip_thought_signature_validator"


def user(text: str, **kw: Any) -> Message:
    return Message(id="u", session_id="s", role="user", parts=[TextPart(text, **kw)])


def assistant(*parts: Any, model: str | None = "gem/gemini-2.5-flash") -> Message:
    return Message(id="a", session_id="s", role="assistant", parts=list(parts), model=model)


def call(call_id: str, name: str, args: Json, output: str = "ok", *, state: Any = "completed",
         signature: str | None = None, **kw: Any) -> ToolPart:
    return ToolPart(call_id=call_id, name=name, input=args, raw_input=json.dumps(args),
                    state=state, output=output, signature=signature, **kw)


def request(*messages: Message, **kw: Any) -> ModelRequest:
    return ModelRequest(model="gemini-2.5-flash", system=kw.pop("system", ""),
                        messages=list(messages), **kw)


# -- requests ----------------------------------------------------------------------------------


def test_a_first_request() -> None:
    tool = ToolSpec("read", "Read a file.", {
        "type": "object", "properties": {"path": {"type": "string", "description": "File"}},
        "required": ["path"], "additionalProperties": False})
    body = to_wire(request(user("hi", model_text="hi (expanded)"), system="You are totem.",
                           tools=[tool], max_tokens=1000, temperature=0.2))
    assert body == {
        "contents": [{"role": "user", "parts": [{"text": "hi (expanded)"}]}],
        "systemInstruction": {"parts": [{"text": "You are totem."}]},
        "tools": [{"functionDeclarations": [{
            "name": "read", "description": "Read a file.",
            "parameters": {"type": "OBJECT", "required": ["path"], "properties": {
                "path": {"type": "STRING", "description": "File"}}}}]}],
        "generationConfig": {"maxOutputTokens": 1000, "temperature": 0.2},
    }


def test_a_tool_step_goes_back_with_signatures_on_their_own_parts() -> None:
    step = assistant(
        ReasoningPart("thinking about files", signature="c2lnLXRob3VnaHQ="),
        TextPart("Let me look.", signature="c2lnLXRleHQ="),
        call("call-real-1", "read", {"path": "a.py"}, "print(1)", signature="c2lnLWNhbGw="),
        call("gcall_18f00001", "read", {"path": "b.py"}, "print(2)"),
    )
    body = to_wire(request(user("read both"), step), provider="gem")
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "read both"}]},
        {"role": "model", "parts": [
            {"text": "thinking about files", "thought": True,
             "thoughtSignature": "c2lnLXRob3VnaHQ="},
            {"text": "Let me look.", "thoughtSignature": "c2lnLXRleHQ="},
            {"functionCall": {"name": "read", "args": {"path": "a.py"}, "id": "call-real-1"},
             "thoughtSignature": "c2lnLWNhbGw="},
            {"functionCall": {"name": "read", "args": {"path": "b.py"}}},  # made-up id: none
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "read", "response": {"output": "print(1)"},
                                  "id": "call-real-1"}},
            {"functionResponse": {"name": "read", "response": {"output": "print(2)"}}},
        ]},
    ]


def test_signatures_and_ids_go_back_only_to_the_provider_that_issued_them() -> None:
    step = assistant(
        ReasoningPart("hidden", signature="c2lnLXRob3VnaHQ="),
        TextPart("Looking.", signature="c2lnLXRleHQ="),
        call("call-real-1", "read", {"path": "a.py"}, signature="c2lnLWNhbGw="),
        call("call-real-2", "read", {"path": "b.py"}),
        model="other/gemini-2.5-flash",
    )
    contents = to_wire(request(user("go"), step), provider="gem")["contents"]
    # No foreign signature, no foreign id; unsigned reasoning is not sent. The step is in
    # the current turn, so its first call gets the documented skip value.
    assert contents[1]["parts"] == [
        {"text": "Looking."},
        {"functionCall": {"name": "read", "args": {"path": "a.py"}}, "thoughtSignature": FILL},
        {"functionCall": {"name": "read", "args": {"path": "b.py"}}},
    ]
    no_fill = to_wire(request(user("go"), step, options={"signature_fill": ""}), provider="gem")
    assert "thoughtSignature" not in json.dumps(no_fill)


def test_only_unsigned_steps_of_the_current_turn_are_filled() -> None:
    old = assistant(call("c1", "read", {"path": "x"}), model="other/m")
    mine = assistant(call("c2", "read", {"path": "y"}, signature="c2lnMg=="))
    foreign = assistant(call("c3", "read", {"path": "z"}), model="other/m")
    contents = to_wire(request(user("one"), old, user("two"), mine, foreign),
                       provider="gem")["contents"]
    signatures = [p.get("thoughtSignature") for c in contents for p in c["parts"]
                  if "functionCall" in p]
    assert signatures == [None, "c2lnMg==", FILL]


def test_results_errors_aborts_and_images() -> None:
    png = ImageBlock("image/png", "iVBORw0KGgo=")
    step = assistant(
        call("c1", "bash", {"command": "false"}, "exit 1", state="error"),
        call("c2", "bash", {"command": "sleep 9"}, "", state="running"),
        call("c3", "read", {"path": "a.png"}, "an image", images=[png]),
    )
    parts = to_wire(request(user("x"), step))["contents"][2]["parts"]
    assert [p.get("functionResponse", {}).get("response") for p in parts] == [
        {"error": "exit 1"}, {"output": "[Aborted by user]"}, {"output": "an image"},
        None, None]
    assert parts[3:] == [{"text": "Images from read:"},
                         {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]


def test_text_after_results_is_a_later_step_and_roles_alternate() -> None:
    message = assistant(call("c1", "read", {"path": "a"}), TextPart("Done reading."))
    body = to_wire(request(user("go"), message, user("Continue.", synthetic=True)))
    assert [(c["role"], [next(iter(p)) for p in c["parts"]]) for c in body["contents"]] == [
        ("user", ["text"]),
        ("model", ["functionCall"]),
        ("user", ["functionResponse"]),
        ("model", ["text"]),
        ("user", ["text"]),
    ]


def test_a_user_message_right_after_results_joins_their_content() -> None:
    aborted = assistant(call("gcall_1", "bash", {"command": "make"}, "", state="pending"),
                        model="gem/m")
    body = to_wire(request(user("build"), aborted, user("stop, use ninja")), provider="gem")
    assert body["contents"][2] == {"role": "user", "parts": [
        {"functionResponse": {"name": "bash", "response": {"output": "[Aborted by user]"}}},
        {"text": "stop, use ninja"}]}


def test_calls_written_as_text_go_back_as_text() -> None:
    message = assistant(TextPart('<tool_call>{"name": "read"}</tool_call>'),
                        ToolPart("c1", "read", {"path": "a"}, state="completed", output="abc",
                                 from_text=True))
    contents = to_wire(request(user("go"), message))["contents"]
    assert contents[1:] == [
        {"role": "model", "parts": [{"text": '<tool_call>{"name": "read"}</tool_call>'}]},
        {"role": "user", "parts": [{"text": "Result of read:\nabc"}]},
    ]


def test_invalid_stored_input_falls_back_to_raw_or_empty_args() -> None:
    raw_only = ToolPart("c1", "read", None, raw_input='{"path": "a"}', state="completed")
    broken = ToolPart("c2", "read", None, raw_input='{"path": ', state="completed")
    parts = to_wire(request(user("x"), assistant(raw_only, broken)))["contents"][1]["parts"]
    assert [p["functionCall"]["args"] for p in parts] == [{"path": "a"}, {}]


def test_generation_options() -> None:
    body = to_wire(request(user("x"), options={"thinking_budget": 0}), options={
        "include_thoughts": True, "thinking_level": "low", "top_p": 0.9, "top_k": 40,
        "stop": "END", "temperature": 0.5, "generation_config": {"seed": 7},
        "safety_settings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "OFF"}],
        "extra_body": {"cachedContent": "cachedContents/abc"}})
    assert body["generationConfig"] == {
        "temperature": 0.5, "topP": 0.9, "topK": 40, "stopSequences": ["END"], "seed": 7,
        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 0,
                           "thinkingLevel": "low"}}
    assert body["safetySettings"][0]["threshold"] == "OFF"
    assert body["cachedContent"] == "cachedContents/abc"
    assert "generationConfig" not in to_wire(request(user("x")))


def test_notices_and_empty_parts_are_not_sent() -> None:
    from totem.messages import NoticePart

    message = assistant(NoticePart("retrying"), TextPart(""), TextPart("answer"))
    assert to_wire(request(user("q"), message))["contents"][1] == {
        "role": "model", "parts": [{"text": "answer"}]}


# -- schemas -----------------------------------------------------------------------------------


class Where(BaseModel):
    path: str = Field(description="A path")
    line: int | None = Field(default=None, description="A line")


class Edit(BaseModel):
    target: Where
    targets: list[Where] = []
    mode: Literal["replace", "insert"] = "replace"
    level: Literal[1, 2] = 1
    extra: dict[str, Any] = {}
    tags: list[str] | None = None


def test_a_pydantic_schema_is_cut_to_the_subset_gemini_accepts() -> None:
    schema = to_gemini_schema(Edit.model_json_schema())
    text = json.dumps(schema)
    for banned in ("$ref", "$defs", "additionalProperties", "default", "title", "anyOf"):
        assert banned not in text, banned
    where = {"type": "OBJECT", "properties": {
        "path": {"type": "STRING", "description": "A path"},
        "line": {"type": "INTEGER", "description": "A line", "nullable": True}},
        "required": ["path"]}
    assert schema == {"type": "OBJECT", "required": ["target"], "properties": {
        "target": where,
        "targets": {"type": "ARRAY", "items": where},
        "mode": {"type": "STRING", "enum": ["replace", "insert"]},
        "level": {"type": "STRING", "enum": ["1", "2"]},
        "extra": {"type": "OBJECT"},
        "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "nullable": True},
    }}


def test_schema_corner_cases() -> None:
    assert to_gemini_schema({"type": ["string", "null"], "format": "uri"}) == {
        "type": "STRING", "nullable": True}
    assert to_gemini_schema({"type": ["string", "integer"], "description": "d"}) == {
        "anyOf": [{"type": "STRING"}, {"type": "INTEGER"}], "description": "d"}
    assert to_gemini_schema({"const": "x"}) == {"type": "STRING", "enum": ["x"]}
    assert to_gemini_schema({"type": "array"}) == {"type": "ARRAY", "items": {"type": "STRING"}}
    assert to_gemini_schema({"type": "integer", "format": "int64", "minimum": 0}) == {
        "type": "INTEGER", "minimum": 0, "format": "int64"}
    recursive = {"$defs": {"Node": {"type": "object", "properties": {
        "name": {"type": "string"}, "children": {"type": "array",
                                                 "items": {"$ref": "#/$defs/Node"}}}}},
                 "$ref": "#/$defs/Node"}
    node = to_gemini_schema(recursive)
    assert node["properties"]["children"]["items"] == {"type": "OBJECT"}
    assert to_gemini_schema({"allOf": [{"$ref": "#/definitions/A"}], "description": "a",
                             "definitions": {"A": {"type": "boolean"}}}) == {
        "type": "BOOLEAN", "description": "a"}


def test_a_tool_without_parameters_declares_none() -> None:
    tool = ToolSpec("now", "The time.", {"type": "object", "properties": {}})
    declaration = to_wire(request(user("x"), tools=[tool]))["tools"][0]["functionDeclarations"]
    assert declaration == [{"name": "now", "description": "The time."}]


# -- stream ------------------------------------------------------------------------------------


def chunk(*parts: Json, finish_reason: str | None = None, usage: Json | None = None) -> Json:
    candidate: Json = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish_reason:
        candidate["finishReason"] = finish_reason
    out: Json = {"candidates": [candidate]}
    if usage:
        out["usageMetadata"] = usage
    return out


def read(*chunks: Json) -> list[StreamEvent]:
    state = GeminiStreamState()
    events: list[StreamEvent] = []
    for item in chunks:
        events += from_wire(item, state)
    return events + finish(state)


def test_text_thoughts_signatures_and_usage() -> None:
    events = read(
        chunk({"text": "Let me think", "thought": True}),
        chunk({"text": "", "thought": True, "thoughtSignature": "c2ln"}),
        chunk({"text": "Hello", "thoughtSignature": "dGV4dA=="}),
        chunk({"text": " world"}, finish_reason="STOP", usage={
            "promptTokenCount": 120, "cachedContentTokenCount": 100,
            "candidatesTokenCount": 5, "thoughtsTokenCount": 30, "totalTokenCount": 155}),
    )
    assert events == [
        ReasoningChunk("Let me think"),
        ReasoningChunk("", signature="c2ln"),
        TextChunk("Hello", signature="dGV4dA=="),
        TextChunk(" world"),
        UsageReport(Usage(input=120, output=35, cache_read=100, reasoning=30)),
        StreamEnd("stop", "STOP"),
    ]


def test_parallel_calls_each_begin_with_their_args() -> None:
    events = read(chunk(
        {"functionCall": {"name": "read", "args": {"path": "a"}}, "thoughtSignature": "c2ln"},
        {"functionCall": {"name": "grep", "args": {"pattern": "x"}, "id": "fc-9"}},
    ), chunk({"text": ""}, finish_reason="STOP"))
    begins = [e for e in events if isinstance(e, ToolCallBegin)]
    assert [(b.index, b.name, b.signature) for b in begins] == [
        (0, "read", "c2ln"), (1, "grep", None)]
    assert begins[0].call_id.startswith("gcall_") and begins[1].call_id == "fc-9"
    args = [e for e in events if isinstance(e, ToolArgsChunk)]
    assert [(a.index, json.loads(a.text)) for a in args] == [
        (0, {"path": "a"}), (1, {"pattern": "x"})]
    assert events[-1] == StreamEnd("tool_calls", "STOP")


@pytest.mark.parametrize(("raw", "reason"), [
    ("MAX_TOKENS", "length"), ("SAFETY", "other"), ("RECITATION", "other"),
    ("FUNCTION_CALL", "tool_calls"), ("OTHER", "other")])
def test_finish_reasons(raw: str, reason: str) -> None:
    assert read(chunk({"text": "x"}, finish_reason=raw))[-1] == StreamEnd(reason, raw)  # type: ignore[arg-type]


def test_a_blocked_prompt_ends_with_its_reason() -> None:
    events = read({"promptFeedback": {"blockReason": "SAFETY"},
                   "usageMetadata": {"promptTokenCount": 9}})
    assert events[-1] == StreamEnd("other", "PROMPT_BLOCKED:SAFETY")


def test_empty_and_malformed_streams_are_retryable() -> None:
    with pytest.raises(RetryableError, match="before any output"):
        read()
    with pytest.raises(RetryableError, match="malformed function call"):
        read(chunk(finish_reason="MALFORMED_FUNCTION_CALL"))
    state = GeminiStreamState(malformed=["{oops"])
    with pytest.raises(RetryableError, match="malformed stream"):
        finish(state)


def test_errors_inside_the_stream_are_classified() -> None:
    state = GeminiStreamState()
    with pytest.raises(RateLimited, match="RESOURCE_EXHAUSTED: quota"):
        from_wire({"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}},
                  state)
    with pytest.raises(InvalidRequest):
        from_wire({"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}},
                  state)
    with pytest.raises(RetryableError, match="overloaded"):
        from_wire({"error": {"code": 503, "message": "overloaded"}}, state)


def test_signatures_survive_the_recorded_round_trip() -> None:
    """Events -> parts (as the step recorder stores them) -> the next request."""
    from totem.run.recorder import StepRecorder
    from totem.store.sqlite import SqliteStore

    store = SqliteStore(":memory:")
    session = store.create_session(project="/p", model="gem/gemini-3-flash")
    message = Message(id="m1", session_id=session.id, role="assistant",
                      model="gem/gemini-3-flash")
    store.add_message(message)
    events = read(
        chunk({"text": "plan", "thought": True, "thoughtSignature": "dGhvdWdodA=="}),
        chunk({"text": "Reading."}, {"text": "", "thoughtSignature": "dGV4dA=="}),
        chunk({"functionCall": {"name": "read", "args": {"path": "a"}},
               "thoughtSignature": "Y2FsbA=="}, finish_reason="STOP"),
    )

    async def record() -> None:  # the recorder flushes on the running loop
        recorder = StepRecorder(message, store=store, emit=lambda event: None)
        for event in events:
            recorder.on_event(event)
        [tool] = recorder.end()
        tool.state, tool.output = "completed", "content of a"
        recorder.save(tool)

    asyncio.run(record())
    stored = store.messages(session.id)[-1]
    parts = to_wire(request(user("read a"), stored), provider="gem")["contents"][1]["parts"]
    assert parts == [
        {"text": "plan", "thought": True, "thoughtSignature": "dGhvdWdodA=="},
        {"text": "Reading.", "thoughtSignature": "dGV4dA=="},
        {"functionCall": {"name": "read", "args": {"path": "a"}}, "thoughtSignature": "Y2FsbA=="},
    ]
    store.close()
