"""Ollama's native chat mapping as pure functions: bodies, `num_ctx` sizing, NDJSON lines."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from totem.messages import ImageBlock, Message, ReasoningPart, TextPart, ToolPart, Usage
from totem.providers.base import (
    ModelRequest,
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
from totem.providers.wire.ollama import (
    OllamaStreamState,
    estimate_num_ctx,
    finish,
    from_wire,
    to_wire,
)

Json = dict[str, Any]
READ = ToolSpec("read", "Read a file.", {"type": "object", "properties": {
    "path": {"type": "string"}}, "required": ["path"]})


def user(text: str) -> Message:
    return Message(id="u", session_id="s", role="user", parts=[TextPart(text)])


def assistant(*parts: Any) -> Message:
    return Message(id="a", session_id="s", role="assistant", parts=list(parts),
                   model="local/qwen3:4b")


def call(call_id: str, args: Json, output: str = "ok", **kw: Any) -> ToolPart:
    return ToolPart(call_id, "read", args, json.dumps(args), kw.pop("state", "completed"),
                    output, **kw)


def request(*messages: Message, **kw: Any) -> ModelRequest:
    return ModelRequest(model="qwen3:4b", system=kw.pop("system", "You are totem."),
                        messages=list(messages), **kw)


# -- requests ----------------------------------------------------------------------------------


def test_a_first_request() -> None:
    body = to_wire(request(user("hi"), tools=[READ], max_tokens=512, temperature=0.1),
                   options={"think": "high", "keep_alive": "30m", "repeat_penalty": 1.1,
                            "ollama_options": {"top_k": 20}, "headers": {"x": "y"}})
    num_ctx = body["options"].pop("num_ctx")
    assert body == {
        "model": "qwen3:4b",
        "messages": [{"role": "system", "content": "You are totem."},
                     {"role": "user", "content": "hi"}],
        "stream": True,
        "tools": [{"type": "function", "function": {
            "name": "read", "description": "Read a file.", "parameters": READ.parameters}}],
        "think": "high",
        "keep_alive": "30m",
        "options": {"repeat_penalty": 1.1, "temperature": 0.1, "num_predict": 512, "top_k": 20},
    }
    assert num_ctx == 4096  # (prompt + 512) x 1.25 is below the minimum


def test_num_ctx_is_sized_from_the_request() -> None:
    body: Json = {"messages": [{"role": "user", "content": "x" * 35_000}], "tools": []}
    chars = len(json.dumps({"messages": body["messages"], "tools": []}))
    expected = math.ceil((math.ceil(chars / 3.5) + 4096) * 1.25 / 2048) * 2048
    assert estimate_num_ctx(body) == expected == 18432
    assert estimate_num_ctx(body, answer=0) == 14336
    assert estimate_num_ctx(body, cap=16384) == 16384
    assert estimate_num_ctx(body, floor=32768) == 32768
    assert estimate_num_ctx(body, floor=32768, cap=20480) == 20480
    assert estimate_num_ctx({"messages": []}, minimum=8192) == 8192
    assert estimate_num_ctx({"messages": []}, minimum=8192, cap=2048) == 2048


def test_a_bigger_conversation_gets_a_bigger_window_up_to_the_limit() -> None:
    small = to_wire(request(user("hi")))["options"]["num_ctx"]
    history = [user("y" * 20_000), assistant(TextPart("z" * 20_000)), user("and?")]
    big = to_wire(request(*history))["options"]["num_ctx"]
    assert small < big and big % 2048 == 0
    assert to_wire(request(*history), context_limit=8192)["options"]["num_ctx"] == 8192
    limited = to_wire(request(*history), options={"max_num_ctx": 12288}, context_limit=32768)
    assert limited["options"]["num_ctx"] == 12288
    assert to_wire(request(user("hi")), floor=big)["options"]["num_ctx"] == big
    fixed = to_wire(request(*history), options={"num_ctx": 2048}, context_limit=1024)
    assert fixed["options"]["num_ctx"] == 2048  # a fixed size is the user's to choose
    tools = to_wire(request(user("hi"), tools=[READ] * 200))["options"]["num_ctx"]
    assert tools > small  # tool definitions count too
    options = {"min_num_ctx": 2048, "answer_tokens": 100, "num_ctx_margin": 1.0}
    assert to_wire(request(user("hi")), options=options)["options"]["num_ctx"] == 2048


def test_a_tool_step_and_its_results() -> None:
    png = ImageBlock("image/png", "iVBORw0KGgo=")
    step = assistant(
        ReasoningPart("look at both"),
        TextPart("Reading."),
        call("c1", {"path": "a.py"}, "print(1)"),
        call("c2", {"path": "b.png"}, "an image", images=[png]),
        call("c3", {"path": "c.py"}, "", state="running"),
    )
    messages = to_wire(request(user("go"), step))["messages"][2:]
    assert messages == [
        {"role": "assistant", "content": "Reading.", "tool_calls": [
            {"function": {"name": "read", "arguments": {"path": "a.py"}}},
            {"function": {"name": "read", "arguments": {"path": "b.png"}}},
            {"function": {"name": "read", "arguments": {"path": "c.py"}}}]},
        {"role": "tool", "content": "print(1)", "tool_name": "read"},
        {"role": "tool", "content": "an image", "tool_name": "read"},
        {"role": "tool", "content": "[Aborted by user]", "tool_name": "read"},
        {"role": "user", "content": "Images from read:", "images": ["iVBORw0KGgo="]},
    ]
    with_thinking = to_wire(request(user("go"), step), options={"send_reasoning": True})
    assert with_thinking["messages"][2]["thinking"] == "look at both"


def test_text_after_results_and_calls_written_as_text() -> None:
    message = assistant(call("c1", {"path": "a"}), TextPart("Now as text:"),
                        ToolPart("c2", "read", {"path": "b"}, state="completed", output="B",
                                 from_text=True))
    assert to_wire(request(user("go"), message))["messages"][2:] == [
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "read", "arguments": {"path": "a"}}}]},
        {"role": "tool", "content": "ok", "tool_name": "read"},
        {"role": "assistant", "content": "Now as text:"},
        {"role": "user", "content": "Result of read:\nB"},
    ]


def test_extra_body_and_request_options_win() -> None:
    body = to_wire(request(user("x"), options={"think": False}),
                   options={"think": True, "extra_body": {"format": "json"}})
    assert body["think"] is False and body["format"] == "json"


# -- stream ------------------------------------------------------------------------------------


def line(content: str = "", *, done: bool = False, **message: Any) -> Json:
    out: Json = {"model": "qwen3:4b", "created_at": "2026-01-01T00:00:00Z",
                 "message": {"role": "assistant", "content": content, **message}, "done": done}
    return out


def read(*chunks: Json) -> list[StreamEvent]:
    state = OllamaStreamState()
    events: list[StreamEvent] = []
    for chunk in chunks:
        events += from_wire(chunk, state)
    return events + finish(state)


def done(reason: str = "stop", **counts: int) -> Json:
    return {**line(done=True), "done_reason": reason, **counts}


def test_thinking_text_and_usage() -> None:
    events = read(line(thinking="Hmm, "), line(thinking="yes."), line("Hel"), line("lo"),
                  done(prompt_eval_count=42, eval_count=7))
    assert events == [ReasoningChunk("Hmm, "), ReasoningChunk("yes."), TextChunk("Hel"),
                      TextChunk("lo"), UsageReport(Usage(input=42, output=7)),
                      StreamEnd("stop", "stop")]
    assert read(line(reasoning_content="why"), done())[0] == ReasoningChunk("why")


def test_whole_tool_calls_get_ids_of_their_own() -> None:
    events = read(
        line(tool_calls=[{"function": {"name": "read", "arguments": {"path": "a"}}}]),
        line(tool_calls=[{"function": {"name": "grep", "arguments": '{"pattern": "x"}'},
                          "id": "call_from_ollama"}]),
        done())
    begins = [e for e in events if isinstance(e, ToolCallBegin)]
    assert [(b.index, b.name) for b in begins] == [(0, "read"), (1, "grep")]
    assert begins[0].call_id.startswith("call_") and begins[1].call_id == "call_from_ollama"
    args = [(e.index, json.loads(e.text)) for e in events if isinstance(e, ToolArgsChunk)]
    assert args == [(0, {"path": "a"}), (1, {"pattern": "x"})]
    assert events[-1] == StreamEnd("tool_calls", "stop")
    again = [e for e in read(line(tool_calls=[{"function": {"name": "read", "arguments": {}}}]),
                             done()) if isinstance(e, ToolCallBegin)]
    assert again[0].call_id != begins[0].call_id


@pytest.mark.parametrize(("raw", "reason"), [("length", "length"), ("load", "other"),
                                             ("stop", "stop")])
def test_done_reasons(raw: str, reason: str) -> None:
    assert read(line("x"), done(raw))[-1] == StreamEnd(reason, raw)  # type: ignore[arg-type]


def test_broken_streams_are_retryable_errors() -> None:
    with pytest.raises(RetryableError, match="before any output"):
        read()
    with pytest.raises(RetryableError, match="before its last line"):
        read(line("partial answer"))
    with pytest.raises(RetryableError, match="error in stream: model runner crashed"):
        read(line("a"), {"error": "model runner crashed"})
    with pytest.raises(RetryableError, match="malformed stream"):
        finish(OllamaStreamState(malformed=["{oops"]))
