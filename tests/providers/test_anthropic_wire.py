"""The Anthropic Messages mapping, pure: `to_wire`, `cache_markers`, `from_wire`, `finish`."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from totem.messages import (
    ImageBlock,
    Message,
    NoticePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolPart,
    Usage,
)
from totem.providers.anthropic import (
    ABORTED_OUTPUT,
    MessagesStreamState,
    cache_markers,
    finish,
    from_sse,
    from_wire,
    to_wire,
)
from totem.providers.base import (
    AuthError,
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

EPHEMERAL = {"type": "ephemeral"}
READ = ToolSpec("read", "Read a file.", {"type": "object", "properties": {"path": {}}})
GREP = ToolSpec("grep", "Search.", {"type": "object", "properties": {"pattern": {}}})


def user(*parts: Part | str) -> Message:
    return Message(id="u", session_id="s", role="user",
                   parts=[TextPart(p) if isinstance(p, str) else p for p in parts])


def assistant(*parts: Part | str, model: str | None = "claude/claude-opus-4-7") -> Message:
    return Message(id="a", session_id="s", role="assistant", model=model,
                   parts=[TextPart(p) if isinstance(p, str) else p for p in parts])


def tool(call_id: str, output: str = "ok", state: Any = "completed", **kw: Any) -> ToolPart:
    return ToolPart(call_id=call_id, name="read", input={"path": "a.py"}, state=state,
                    output=output, **kw)


def wire(*messages: Message, cache: bool = False, **kw: Any) -> dict[str, Any]:
    options = {"cache": cache, **kw.pop("options", {})}
    request = ModelRequest(model=kw.pop("model", "claude-opus-4-7"), system=kw.pop("system", ""),
                           messages=list(messages), options=options, **kw)
    return to_wire(request, provider="claude")


# -- request -----------------------------------------------------------------------------------


def test_the_body_has_model_max_tokens_system_and_tools() -> None:
    body = wire(user("hi"), system="You are totem.", tools=[READ], temperature=0.2)
    assert body == {
        "model": "claude-opus-4-7",
        "max_tokens": 8192,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "stream": True,
        "system": [{"type": "text", "text": "You are totem."}],
        "tools": [{"name": "read", "description": "Read a file.",
                   "input_schema": READ.parameters}],
        "temperature": 0.2,
    }


def test_max_tokens_from_the_request_the_options_or_a_default() -> None:
    assert wire(user("hi"), max_tokens=100)["max_tokens"] == 100
    assert wire(user("hi"), options={"max_tokens": 2000})["max_tokens"] == 2000
    thinking = wire(user("hi"), options={"thinking": {"budget_tokens": 10_000}}, temperature=0.5)
    assert thinking["thinking"] == {"type": "enabled", "budget_tokens": 10_000}
    assert thinking["max_tokens"] == 32_000 and "temperature" not in thinking
    big = wire(user("hi"), options={"thinking": {"budget_tokens": 50_000}})
    assert big["max_tokens"] == 58_192
    huge = wire(user("hi"), options={"thinking": {"budget_tokens": 60_000}})
    assert huge["max_tokens"] == 64_000  # the family's output limit


def test_thinking_option_forms() -> None:
    assert wire(user("x"), options={"thinking": 4096})["thinking"]["budget_tokens"] == 4096
    assert wire(user("x"), options={"thinking": {"type": "adaptive"}})["thinking"] == {
        "type": "adaptive"}
    for off in (None, False, {"type": "disabled"}, {}, 0):
        assert "thinking" not in wire(user("x"), options={"thinking": off})


def test_user_text_sends_model_text_and_skips_empty_and_notices() -> None:
    body = wire(user(TextPart("/review", model_text="Review the diff."), TextPart(""),
                     NoticePart("retrying")))
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Review the diff."}]}]


def test_assistant_blocks_in_order_with_signed_thinking_sent_back() -> None:
    body = wire(
        user("read a.py"),
        assistant(ReasoningPart("I should read it.", signature="sig-1"),
                  ReasoningPart("", redacted_data="REDACTED=="), TextPart(""),
                  "Reading.", NoticePart("note"),
                  ToolPart(call_id="toolu_1", name="read", raw_input='{"path": "a.py"}',
                           state="completed", output="print(1)")),
        user("thanks"),
    )
    assert body["messages"][1] == {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "I should read it.", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "REDACTED=="},
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.py"}},
    ]}
    assert body["messages"][2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "print(1)"},
        {"type": "text", "text": "thanks"},  # the next user message, merged after the results
    ]}


def test_thinking_from_another_provider_or_unsigned_is_dropped() -> None:
    parts: list[Part | str] = [ReasoningPart("hmm", signature="sig"),
                               ReasoningPart("", redacted_data="R"), "Answer."]
    for model in ("openai/gpt-5", None, "claudette/claude-opus-4-7"):
        body = wire(user("q"), assistant(*parts, model=model), user("more"))
        assert body["messages"][1]["content"] == [{"type": "text", "text": "Answer."}]
    unsigned = wire(user("q"), assistant(ReasoningPart("cut short"), "A."), user("more"))
    assert unsigned["messages"][1]["content"] == [{"type": "text", "text": "A."}]


def test_a_thinking_block_recorded_onto_a_redacted_part_still_goes_back() -> None:
    merged = ReasoningPart("after", signature="sig-2", redacted_data="R")
    body = wire(user("q"), assistant(merged, "A."), user("more"))
    assert body["messages"][1]["content"][:2] == [
        {"type": "redacted_thinking", "data": "R"},
        {"type": "thinking", "thinking": "after", "signature": "sig-2"}]


def test_blank_text_is_never_sent() -> None:
    body = wire(user("q", "  \n"), assistant("\n\n", tool("t1", " \n")))
    assert body["messages"][0]["content"] == [{"type": "text", "text": "q"}]
    assert [b["type"] for b in body["messages"][1]["content"]] == ["tool_use"]
    assert body["messages"][2]["content"][0]["content"] == "(no output)"


def test_tool_use_input_falls_back_to_raw_input_then_empty() -> None:
    calls = [ToolPart(call_id="c1", name="read", input={"path": "x"}, raw_input="garbage"),
             ToolPart(call_id="c2", name="read", raw_input='{"path": "y"}'),
             ToolPart(call_id="c3", name="read", raw_input='{"path": '),
             ToolPart(call_id="c4", name="read", raw_input="[1]")]
    for part in calls:
        part.state = "completed"
    body = wire(user("q"), assistant(*calls), user("go on"))
    assert [b["input"] for b in body["messages"][1]["content"]] == [
        {"path": "x"}, {"path": "y"}, {}, {}]


def test_all_results_of_a_turn_in_one_user_message_with_errors_and_aborts() -> None:
    body = wire(
        user("do things"),
        assistant(tool("t1", "fine"), tool("t2", "boom", state="error"),
                  tool("t3", "", state="running"), tool("t4", "", state="pending"),
                  tool("t5", "", state="completed")),
    )
    assert len(body["messages"]) == 3
    assert body["messages"][2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "fine"},
        {"type": "tool_result", "tool_use_id": "t2", "content": "boom", "is_error": True},
        {"type": "tool_result", "tool_use_id": "t3", "content": ABORTED_OUTPUT, "is_error": True},
        {"type": "tool_result", "tool_use_id": "t4", "content": ABORTED_OUTPUT, "is_error": True},
        {"type": "tool_result", "tool_use_id": "t5", "content": "(no output)"},
    ]}


def test_images_of_a_tool_result_go_inside_its_content() -> None:
    shot = tool("t1", "a screenshot", images=[ImageBlock("image/png", "iVBORw0KGgo="),
                                              ImageBlock("image/svg+xml", "PHN2Zz4=")])
    body = wire(user("look"), assistant(shot))
    assert body["messages"][2]["content"] == [{
        "type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "a screenshot"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "iVBORw0KGgo="}},
            {"type": "text", "text": "[image/svg+xml image omitted]"},
        ]}]


def test_calls_written_as_text_get_text_results_and_ids_are_made_valid() -> None:
    written = ToolPart(call_id="x", name="read", state="completed", output="1", from_text=True)
    foreign = ToolPart(call_id="functions.read:0", name="read", input={}, state="completed",
                       output="2")
    body = wire(user("q"), assistant("<tool>read</tool>", written, foreign))
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "<tool>read</tool>"},
        {"type": "tool_use", "id": "functions_read_0", "name": "read", "input": {}},
    ]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "functions_read_0", "content": "2"},
        {"type": "text", "text": "Result of read:\n1"},
    ]


def test_consecutive_messages_of_one_role_are_merged_and_empty_turns_skipped() -> None:
    body = wire(user("one"), user("two"), assistant(NoticePart("aborted")), user("three"),
                assistant("A"), assistant("B"))
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    assert [b["text"] for b in body["messages"][0]["content"]] == ["one", "two", "three"]
    assert [b["text"] for b in body["messages"][1]["content"]] == ["A", "B"]


def test_thinking_is_left_off_when_the_tool_turn_has_no_thinking_to_send_back() -> None:
    turn = assistant(ReasoningPart("plan", signature="sig"), tool("t1"))
    ok = wire(user("q"), turn, options={"thinking": {"budget_tokens": 2048}})
    assert ok["thinking"]["type"] == "enabled"
    foreign = assistant(ReasoningPart("plan", signature="sig"), tool("t1"), model="gem/gemini")
    off = wire(user("q"), foreign, options={"thinking": {"budget_tokens": 2048}}, temperature=0.3)
    assert "thinking" not in off and off["temperature"] == 0.3 and off["max_tokens"] == 8192
    answered = wire(user("q"), foreign, user("next"), assistant("plain"), user("again"),
                    options={"thinking": {"budget_tokens": 2048}})
    assert answered["thinking"]["type"] == "enabled"  # only the last assistant turn counts


def test_extra_body_is_merged() -> None:
    body = wire(user("hi"), options={"extra_body": {"metadata": {"user_id": "u1"}}})
    assert body["metadata"] == {"user_id": "u1"}


# -- prompt caching ----------------------------------------------------------------------------


def test_cache_markers_on_system_last_tool_and_the_last_two_user_messages() -> None:
    body = wire(user("one"), assistant(tool("t1")), user("two"), assistant("ok"), user("three"),
                system="sys", tools=[READ, GREP], cache=True)
    assert body["system"] == [{"type": "text", "text": "sys", "cache_control": EPHEMERAL}]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1]["cache_control"] == EPHEMERAL
    marked = [(i, j) for i, m in enumerate(body["messages"])
              for j, b in enumerate(m["content"]) if "cache_control" in b]
    # messages: user(one), assistant, user(result, two), assistant(ok), user(three)
    assert marked == [(2, 1), (4, 0)]
    assert json.dumps(body).count('"cache_control"') == 4


def test_cache_markers_never_exceed_four_and_leave_the_input_alone() -> None:
    body = wire(user("a"), assistant("b"), user("c"), system="s", tools=[READ])
    before = copy.deepcopy(body)
    marked = cache_markers(body, ttl="1h")
    assert body == before
    assert json.dumps(marked).count('"cache_control"') == 4
    assert marked["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    two = cache_markers(body, limit=2)
    assert json.dumps(two).count('"cache_control"') == 2
    assert "cache_control" in two["tools"][0] and "cache_control" not in json.dumps(
        two["messages"])


def test_cache_options_and_a_stable_prefix() -> None:
    messages = (user("a"), assistant(tool("t1", images=[ImageBlock("image/png", "AA==")])),
                user("c"))
    on = wire(*messages, system="s", tools=[READ], cache=True)
    assert on == wire(*messages, system="s", tools=[READ], cache=True)
    assert json.dumps(on) == json.dumps(wire(*messages, system="s", tools=[READ], cache=True))
    off = wire(*messages, system="s", tools=[READ])
    assert '"cache_control"' not in json.dumps(off)
    ttl = wire(*messages, system="s", cache=True, options={"cache_ttl": "1h"})
    assert ttl["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    # the user turn whose last block is an image in a tool result is marked on that result
    assert on["messages"][2]["content"][-1]["cache_control"] == EPHEMERAL
    default = to_wire(ModelRequest("claude-opus-4-7", "s", [user("x")]), provider="claude")
    assert default["system"][0]["cache_control"] == EPHEMERAL  # caching is on by default


# -- stream ------------------------------------------------------------------------------------


def events_of(*items: dict[str, Any]) -> tuple[list[StreamEvent], MessagesStreamState]:
    state = MessagesStreamState()
    out: list[StreamEvent] = []
    for item in items:
        out += from_wire(str(item["type"]), item, state)
    return out + finish(state), state


def start(usage: dict[str, int] | None = None) -> dict[str, Any]:
    return {"type": "message_start", "message": {"id": "msg", "role": "assistant", "content": [],
                                                 "usage": usage or {"input_tokens": 5,
                                                                    "output_tokens": 1}}}


def block(index: int, content: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content}


def delta(index: int, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": fields}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def end(reason: str, **usage: int) -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": reason},
            "usage": usage or {"output_tokens": 3}}


MESSAGE_STOP = {"type": "message_stop"}


def test_text_thinking_signature_and_redacted_blocks() -> None:
    events, _ = events_of(
        start(),
        block(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, type="thinking_delta", thinking="Hmm."),
        delta(0, type="signature_delta", signature="SIG"),
        stop(0),
        block(1, {"type": "redacted_thinking", "data": "OPAQUE"}),
        stop(1),
        {"type": "ping"},
        block(2, {"type": "text", "text": ""}),
        delta(2, type="text_delta", text="Hello"),
        delta(2, type="citations_delta", citation={}),
        delta(2, type="text_delta", text=" world"),
        stop(2),
        end("end_turn"),
        MESSAGE_STOP,
    )
    assert events == [
        ReasoningChunk("Hmm."), ReasoningChunk("", signature="SIG"),
        ReasoningChunk("", redacted_data="OPAQUE"), TextChunk("Hello"), TextChunk(" world"),
        UsageReport(Usage(input=5, output=3)), StreamEnd("stop", "end_turn"),
    ]


def test_two_tool_calls_with_streamed_and_whole_inputs() -> None:
    events, _ = events_of(
        start(),
        block(0, {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {}}),
        delta(0, type="input_json_delta", partial_json=""),
        delta(0, type="input_json_delta", partial_json='{"path":'),
        delta(0, type="input_json_delta", partial_json=' "a.py"}'),
        stop(0),
        block(1, {"type": "tool_use", "id": "toolu_b", "name": "grep",
                  "input": {"pattern": "x"}}),
        stop(1),
        block(2, {"type": "tool_use", "id": "toolu_c", "name": "todo", "input": {}}),
        stop(2),
        end("tool_use"),
        MESSAGE_STOP,
    )
    assert events[:-2] == [
        ToolCallBegin(0, "toolu_a", "read"), ToolArgsChunk(0, '{"path":'),
        ToolArgsChunk(0, ' "a.py"}'), ToolCallBegin(1, "toolu_b", "grep"),
        ToolArgsChunk(1, '{"pattern": "x"}'), ToolCallBegin(2, "toolu_c", "todo"),
    ]
    assert events[-1] == StreamEnd("tool_calls", "tool_use")


def test_server_tool_blocks_and_unknown_events_are_ignored() -> None:
    events, _ = events_of(
        start(),
        {"type": "future_event", "usage": {"input_tokens": 99}},
        stop(7),  # a stop for a block never started
        block(0, {"type": "server_tool_use", "id": "srv", "name": "web_search", "input": {}}),
        delta(0, type="input_json_delta", partial_json='{"query": "x"}'),
        stop(0),
        block(1, {"type": "web_search_tool_result", "content": []}),
        stop(1),
        delta(9, type="text_delta", text="orphan text still counts"),
        end("end_turn"),
    )
    assert events == [TextChunk("orphan text still counts"),
                      UsageReport(Usage(input=5, output=3)), StreamEnd("stop", "end_turn")]


@pytest.mark.parametrize(("raw", "reason"), [
    ("end_turn", "stop"), ("stop_sequence", "stop"), ("tool_use", "tool_calls"),
    ("max_tokens", "length"), ("refusal", "other"), ("pause_turn", "other"),
    ("model_context_window_exceeded", "other"),
])
def test_stop_reasons(raw: str, reason: str) -> None:
    events, _ = events_of(start(), block(0, {"type": "text", "text": "x"}), end(raw))
    assert events[-1] == StreamEnd(reason, raw)  # type: ignore[arg-type]


def test_usage_counts_every_prompt_token_and_later_totals_win() -> None:
    events, _ = events_of(
        start({"input_tokens": 10, "cache_read_input_tokens": 1000,
               "cache_creation_input_tokens": 200, "output_tokens": 1}),
        block(0, {"type": "text", "text": "x"}),
        end("end_turn", output_tokens=42, cache_read_input_tokens=1100),
    )
    assert UsageReport(Usage(input=1310, output=42, cache_read=1100, cache_write=200)) in events


@pytest.mark.parametrize(("kind", "error", "status"), [
    ("overloaded_error", RateLimited, 529),
    ("rate_limit_error", RateLimited, 429),
    ("api_error", RetryableError, 500),
    ("invalid_request_error", InvalidRequest, 400),
    ("authentication_error", AuthError, 401),
    ("something_new", RetryableError, 500),
])
def test_error_events_are_classified(kind: str, error: type[Exception], status: int) -> None:
    state = MessagesStreamState()
    from_wire("message_start", start(), state)
    payload = {"type": "error", "error": {"type": kind, "message": "Overloaded"}}
    with pytest.raises(error) as raised:
        from_wire("error", payload, state)
    assert raised.value.status == status  # type: ignore[attr-defined]
    assert f"{kind}: Overloaded" in str(raised.value)


def test_an_error_event_that_is_not_json_is_retryable() -> None:
    with pytest.raises(RetryableError, match="error in stream: upstream gone"):
        from_sse("error", "upstream gone", MessagesStreamState())


def test_a_stream_that_ends_early_is_retryable() -> None:
    with pytest.raises(RetryableError, match="before any output"):
        finish(MessagesStreamState())
    with pytest.raises(RetryableError, match="before any output"):
        events_of(start(), block(0, {"type": "text", "text": ""}))
    with pytest.raises(RetryableError, match="cut before the answer ended"):
        events_of(start(), block(0, {"type": "text", "text": ""}),
                  delta(0, type="text_delta", text="Half"))
    state = MessagesStreamState()
    assert from_sse("message_start", "{not json", state) == []
    assert from_sse("ping", "", state) == []
    with pytest.raises(RetryableError, match="malformed stream.*not json"):
        finish(state)


def test_a_cut_tool_call_still_gets_its_arguments_at_the_end() -> None:
    events, _ = events_of(
        start(),
        block(0, {"type": "tool_use", "id": "t", "name": "write", "input": {"path": "a"}}),
        end("max_tokens"),
    )
    assert events[:2] == [ToolCallBegin(0, "t", "write"), ToolArgsChunk(0, '{"path": "a"}')]
    assert events[-1] == StreamEnd("length", "max_tokens")
