"""The pure Converse mapping: `to_wire` (checked against botocore's own model of the API)
and `from_wire` / `finish`."""

from __future__ import annotations

import base64
import copy
import json
import subprocess
import sys
from typing import Any

import pytest

from totem.messages import (
    ImageBlock,
    Message,
    ReasoningPart,
    TextPart,
    ToolPart,
    ToolState,
    Usage,
)
from totem.providers.base import (
    AuthError,
    FatalError,
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
from totem.providers.bedrock import ConverseStreamState, finish, from_wire, to_wire
from totem.providers.transport.eventstream import EventStreamDecoder, encode_event, encode_message
from totem.providers.wire.bedrock import decode

MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
READ = ToolSpec("read", "Read a file.", {"type": "object", "properties": {"path": {
    "type": "string"}}, "required": ["path"]})
CACHE = {"cachePoint": {"type": "default"}}


def user(text: str, model_text: str | None = None) -> Message:
    return Message(id="u", session_id="s", role="user", parts=[TextPart(text, model_text)])


def assistant(*parts: Any, model: str | None = "aws/" + MODEL) -> Message:
    return Message(id="a", session_id="s", role="assistant", parts=list(parts), model=model)


def tool(call_id: str, name: str = "read", *, output: str = "ok", state: ToolState = "completed",
         images: list[ImageBlock] | None = None, from_text: bool = False) -> ToolPart:
    return ToolPart(call_id=call_id, name=name, input={"path": f"{call_id}.py"}, state=state,
                    output=output, images=images or [], from_text=from_text)


def request(*messages: Message, tools: list[ToolSpec] | None = None, **kw: Any) -> ModelRequest:
    return ModelRequest(model=MODEL, system="You are totem.", messages=list(messages),
                        tools=[READ] if tools is None else tools, **kw)


TOOL_TURN = request(
    user("fix the bug"),
    assistant(ReasoningPart("Let me look.", signature="sig-1"), TextPart("Reading both."),
              tool("c1"), tool("c2", output="", images=[ImageBlock("image/png", PNG)]),
              tool("c3", output="no such file", state="error")),
    user("thanks", model_text="thanks!"),
    max_tokens=1024, temperature=0.2,
)


def test_system_tools_messages_and_the_three_cache_points() -> None:
    body = to_wire(request(user("hello")), provider="aws")
    assert body["system"] == [{"text": "You are totem."}, CACHE]
    assert body["toolConfig"] == {"tools": [
        {"toolSpec": {"name": "read", "description": "Read a file.",
                      "inputSchema": {"json": READ.parameters}}}, CACHE]}
    assert body["messages"] == [{"role": "user", "content": [{"text": "hello"}, CACHE]}]
    assert "inferenceConfig" not in body and "modelId" not in body


def test_a_tool_turn_all_results_in_one_user_message_with_the_next_text() -> None:
    body = to_wire(TOOL_TURN, provider="aws")
    first, second, third = body["messages"]
    assert first == {"role": "user", "content": [{"text": "fix the bug"}]}
    assert second == {"role": "assistant", "content": [
        {"reasoningContent": {"reasoningText": {"text": "Let me look.", "signature": "sig-1"}}},
        {"text": "Reading both."},
        {"toolUse": {"toolUseId": "c1", "name": "read", "input": {"path": "c1.py"}}},
        {"toolUse": {"toolUseId": "c2", "name": "read", "input": {"path": "c2.py"}}},
        {"toolUse": {"toolUseId": "c3", "name": "read", "input": {"path": "c3.py"}}},
    ]}
    assert third == {"role": "user", "content": [
        {"toolResult": {"toolUseId": "c1", "content": [{"text": "ok"}]}},
        {"toolResult": {"toolUseId": "c2", "content": [
            {"image": {"format": "png", "source": {"bytes": PNG}}}]}},
        {"toolResult": {"toolUseId": "c3", "content": [{"text": "no such file"}],
                        "status": "error"}},
        {"text": "thanks!"},  # what the model receives, merged: roles must alternate
        CACHE,  # after the last user turn
    ]}
    assert body["inferenceConfig"] == {"maxTokens": 1024, "temperature": 0.2}


def test_reasoning_goes_back_only_to_the_same_provider_and_only_signed() -> None:
    turn = assistant(ReasoningPart("signed", signature="s"), ReasoningPart("unsigned"),
                     ReasoningPart("", redacted_data="b3BhcXVl"), TextPart("answer"))
    same = to_wire(request(user("q"), turn, user("more")), provider="aws")
    assert same["messages"][1]["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "signed", "signature": "s"}}},
        {"reasoningContent": {"redactedContent": "b3BhcXVl"}},
        {"text": "answer"},
    ]
    for other in ("other", ""):
        body = to_wire(request(user("q"), turn, user("more")), provider=other)
        assert body["messages"][1]["content"] == [{"text": "answer"}]


def test_cache_false_and_cache_ttl() -> None:
    text = json.dumps(to_wire(TOOL_TURN, options={"cache": False}, provider="aws"))
    assert "cachePoint" not in text
    body = to_wire(request(user("hi"), options={"cache_ttl": "1h"}), options={"cache": True})
    assert body["system"][1] == {"cachePoint": {"type": "default", "ttl": "1h"}}
    assert "cachePoint" not in json.dumps(to_wire(request(user("hi"), options={"cache": False})))


def test_without_tools_earlier_calls_travel_as_text() -> None:
    turn = assistant(TextPart("Looking."), tool("c1"))
    body = to_wire(request(user("q"), turn, user("sum up"), tools=[]), provider="aws")
    assert "toolConfig" not in body and "toolUse" not in json.dumps(body)
    assert body["messages"][1]["content"] == [
        {"text": "Looking."}, {"text": '(called the tool read with {"path": "c1.py"})'}]
    assert body["messages"][2]["content"][:2] == [{"text": "Result of read:\nok"},
                                                  {"text": "sum up"}]


def test_calls_written_as_text_and_aborted_calls() -> None:
    turn = assistant(TextPart('<tool>read {"path": "a"}</tool>'),
                     tool("t1", from_text=True, output="content of a"),
                     tool("c2", state="running", output=""))
    body = to_wire(request(user("q"), turn), provider="aws")
    assert [b.get("text") or b.get("toolUse", {}).get("toolUseId")
            for b in body["messages"][1]["content"]] == ['<tool>read {"path": "a"}</tool>', "c2"]
    results = body["messages"][2]["content"]
    assert results[0] == {"text": "Result of read:\ncontent of a"}
    assert results[1]["toolResult"] == {"toolUseId": "c2", "content": [
        {"text": "[Aborted by user]"}], "status": "error"}


def test_empty_messages_are_dropped_and_extra_body_merges() -> None:
    body = to_wire(request(user("q"), assistant(), user("again"), tools=[],
                           options={"extra_body": {"additionalModelRequestFields": {
                               "thinking": {"type": "enabled", "budget_tokens": 2048}}}}))
    assert body["messages"] == [{"role": "user", "content": [
        {"text": "q"}, {"text": "again"}, CACHE]}]
    assert body["additionalModelRequestFields"]["thinking"]["budget_tokens"] == 2048


def _as_params(body: dict[str, Any]) -> dict[str, Any]:
    """The body as boto3 parameters: blobs are bytes there, base64 on the wire."""
    params = copy.deepcopy(body)
    for message in params["messages"]:
        for block in message["content"]:
            reasoning = block.get("reasoningContent", {})
            if "redactedContent" in reasoning:
                reasoning["redactedContent"] = base64.b64decode(reasoning["redactedContent"])
            for item in block.get("toolResult", {}).get("content", []):
                if "image" in item:
                    item["image"]["source"]["bytes"] = base64.b64decode(
                        item["image"]["source"]["bytes"])
    return {"modelId": MODEL, **params}


def test_botocore_validates_and_serializes_our_body_identically() -> None:
    """botocore's model of ConverseStream accepts the body, and would send the same JSON."""
    session = pytest.importorskip("botocore.session").get_session()
    from botocore.serialize import create_serializer  # type: ignore[import-untyped,unused-ignore]
    from botocore.validate import ParamValidator  # type: ignore[import-untyped,unused-ignore]

    operation = session.get_service_model("bedrock-runtime").operation_model("ConverseStream")
    turn = assistant(ReasoningPart("", redacted_data=base64.b64encode(b"x").decode()),
                     TextPart("ok"))
    for req in (TOOL_TURN, request(user("q"), turn, user("z"), tools=[])):
        body = to_wire(req, provider="aws")
        report = ParamValidator().validate(_as_params(body), operation.input_shape)
        assert not report.has_errors(), report.generate_report()
        wire = create_serializer("rest-json").serialize_to_request(_as_params(body), operation)
        assert json.loads(wire["body"]) == body
        assert wire["url_path"] == "/model/anthropic.claude-sonnet-4-20250514-v1%3A0" \
            "/converse-stream"


# -- from_wire -------------------------------------------------------------------------------


def play(events: list[tuple[str, dict[str, Any]]]) -> list[StreamEvent]:
    state = ConverseStreamState()
    out: list[StreamEvent] = []
    for name, payload in events:
        out += from_wire(name, payload, state)
    return out + finish(state)


def delta(index: int, **content: Any) -> tuple[str, dict[str, Any]]:
    return "contentBlockDelta", {"contentBlockIndex": index, "delta": content}


def test_text_reasoning_and_usage_with_cache() -> None:
    events = play([
        ("messageStart", {"role": "assistant"}),
        delta(0, reasoningContent={"text": "think"}),
        delta(0, reasoningContent={"signature": "sig"}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        delta(1, text="Hel"), delta(1, text="lo"), delta(1, text=""),
        ("messageStop", {"stopReason": "end_turn"}),
        ("metadata", {"usage": {"inputTokens": 10, "outputTokens": 5,
                                "cacheReadInputTokens": 100, "cacheWriteInputTokens": 20,
                                "totalTokens": 135}, "metrics": {"latencyMs": 1}}),
    ])
    assert events == [
        ReasoningChunk("think"), ReasoningChunk("", signature="sig"),
        TextChunk("Hel"), TextChunk("lo"),
        UsageReport(Usage(input=130, output=5, cache_read=100, cache_write=20)),
        StreamEnd("stop", "end_turn"),
    ]


def test_two_parallel_tool_calls_after_text() -> None:
    events = play([
        delta(0, text="Reading."),
        ("contentBlockStart", {"contentBlockIndex": 1,
                               "start": {"toolUse": {"toolUseId": "tu1", "name": "read"}}}),
        delta(1, toolUse={"input": '{"path":'}), delta(1, toolUse={"input": '"a"}'}),
        ("contentBlockStart", {"contentBlockIndex": 2,
                               "start": {"toolUse": {"toolUseId": "tu2", "name": "glob"}}}),
        delta(2, toolUse={"input": '{"pattern": "*"}'}),
        ("messageStop", {"stopReason": "tool_use"}),
    ])
    assert events == [
        TextChunk("Reading."),
        ToolCallBegin(0, "tu1", "read"), ToolArgsChunk(0, '{"path":'), ToolArgsChunk(0, '"a"}'),
        ToolCallBegin(1, "tu2", "glob"), ToolArgsChunk(1, '{"pattern": "*"}'),
        StreamEnd("tool_calls", "tool_use"),
    ]


@pytest.mark.parametrize(("raw", "reason"), [
    ("end_turn", "stop"), ("stop_sequence", "stop"), ("tool_use", "tool_calls"),
    ("max_tokens", "length"), ("guardrail_intervened", "other"), ("content_filtered", "other"),
    ("model_context_window_exceeded", "other"),
])
def test_stop_reasons(raw: str, reason: str) -> None:
    events = play([delta(0, text="x"), ("messageStop", {"stopReason": raw})])
    assert events[-1] == StreamEnd(reason, raw)  # type: ignore[arg-type]


def test_redacted_reasoning() -> None:
    events = play([delta(0, reasoningContent={"redactedContent": "QUJD"}),
                   ("messageStop", {"stopReason": "end_turn"})])
    assert events[0] == ReasoningChunk("", redacted_data="QUJD")


@pytest.mark.parametrize(("name", "error"), [
    ("throttlingException", RateLimited), ("serviceUnavailableException", RetryableError),
    ("internalServerException", RetryableError), ("modelStreamErrorException", RetryableError),
    ("validationException", InvalidRequest), ("accessDeniedException", AuthError),
    ("somethingNewException", FatalError),
])
def test_exception_events_are_classified(name: str, error: type[Exception]) -> None:
    with pytest.raises(error, match=f"Bedrock {name}: boom") as raised:
        from_wire(name, {"message": "boom"}, ConverseStreamState())
    assert type(raised.value) is error


def test_an_empty_or_cut_stream_is_retryable() -> None:
    with pytest.raises(RetryableError, match="before any output"):
        play([("messageStart", {"role": "assistant"})])
    with pytest.raises(RetryableError, match="no messageStop"):
        play([delta(0, text="partial")])
    state = ConverseStreamState()
    assert from_wire("contentBlockDelta", {"contentBlockIndex": 5, "delta": {
        "toolUse": {"input": "{}"}}}, state) == []
    with pytest.raises(RetryableError, match="unknown block 5"):
        finish(state)


def test_decode_event_stream_messages() -> None:
    state = ConverseStreamState()
    text = encode_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"}})
    [message] = EventStreamDecoder().feed(text)
    assert decode(message, state) == [TextChunk("hi")]
    [garbage] = EventStreamDecoder().feed(encode_message({":event-type": "metadata"}, b"{oops"))
    assert decode(garbage, state) == [] and state.malformed == ["{oops"]
    [plain] = EventStreamDecoder().feed(encode_message(
        {":message-type": "exception", ":exception-type": "throttlingException"}, b"Rate"))
    with pytest.raises(RateLimited, match="throttlingException: Rate"):
        decode(plain, state)


def test_importing_the_adapter_does_not_import_botocore() -> None:
    code = ("import sys, totem.providers.bedrock; "
            "sys.exit(any(m.split('.')[0] in ('botocore', 'boto3') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0
