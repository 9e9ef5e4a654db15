"""The OpenAI chat mapping as pure functions, and HTTP failures through httpx's transport seam."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import pytest

from totem.messages import ImageBlock, Message, NoticePart, Part, ReasoningPart, TextPart, ToolPart
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
from totem.providers.openai_chat import (
    ABORTED_OUTPUT,
    ChatStreamState,
    OpenAIChatProvider,
    finish,
    from_wire,
    to_wire,
)
from totem.providers.transport.retry import parse_retry_after

KEY = "sk-test-SECRET-0123456789"


def msg(role: str, *parts: Part) -> Message:
    return Message(id=f"m_{role}", session_id="s", role=role, parts=list(parts))  # type: ignore[arg-type]


def request(*messages: Message, **kwargs: Any) -> ModelRequest:
    return ModelRequest(model="m", system="You are totem.", messages=list(messages), **kwargs)


# -- to_wire ---------------------------------------------------------------------------------


def test_system_first_then_user_text_as_the_model_receives_it() -> None:
    body = to_wire(request(msg("user", TextPart("/fix bug", model_text="Fix the bug in x.py"))))
    assert body["messages"] == [
        {"role": "system", "content": "You are totem."},
        {"role": "user", "content": "Fix the bug in x.py"},
    ]
    assert body["model"] == "m" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert "tools" not in body and "max_tokens" not in body


def test_notices_are_never_sent() -> None:
    body = to_wire(request(
        msg("user", TextPart("hi"), NoticePart("retrying")),
        msg("assistant", NoticePart("limit reached", level="warning")),
        msg("user", NoticePart("only a notice")),
    ))
    assert body["messages"][1:] == [{"role": "user", "content": "hi"}]


def tool(state: str = "completed", **kwargs: Any) -> ToolPart:
    base: dict[str, Any] = {"call_id": "call_1", "name": "read", "input": {"path": "a.py"},
                            "raw_input": '{"path": "a.py"}', "state": state, "output": "1: x = 1"}
    return ToolPart(**{**base, **kwargs})


def test_assistant_turn_with_a_tool_call_and_its_result() -> None:
    body = to_wire(request(
        msg("user", TextPart("read a.py")),
        msg("assistant", ReasoningPart("I should read it"), TextPart("Reading."), tool()),
    ))
    assistant, result = body["messages"][2:]
    assert assistant == {
        "role": "assistant",
        "content": "Reading.",
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "read", "arguments": '{"path": "a.py"}'}}],
    }
    assert result == {"role": "tool", "tool_call_id": "call_1", "content": "1: x = 1"}


def test_reasoning_goes_back_only_when_asked() -> None:
    turn = msg("assistant", ReasoningPart("think"), TextPart("answer"))
    assert "reasoning_content" not in to_wire(request(turn))["messages"][1]
    sent = to_wire(request(turn), options={"send_reasoning": True})["messages"][1]
    assert sent["reasoning_content"] == "think"


def test_arguments_fall_back_to_the_parsed_input_when_raw_is_not_json() -> None:
    turn = msg("assistant", tool(raw_input='{"path": "a.py"', input={"path": "a.py"}))
    call = to_wire(request(turn))["messages"][1]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"path": "a.py"}
    turn = msg("assistant", tool(raw_input="not json", input=None))
    assert to_wire(request(turn))["messages"][1]["tool_calls"][0]["function"]["arguments"] == "{}"


def test_calls_without_text_have_null_content() -> None:
    assert to_wire(request(msg("assistant", tool())))["messages"][1]["content"] is None


def test_interrupted_tool_calls_are_answered_as_aborted() -> None:
    parts = [tool("running", call_id="c1"), tool("pending", call_id="c2"),
             tool("error", call_id="c3", output="Error: no such file")]
    messages = to_wire(request(msg("assistant", *parts)))["messages"]
    assert [m["content"] for m in messages[2:]] == [ABORTED_OUTPUT, ABORTED_OUTPUT,
                                                    "Error: no such file"]
    assert [m["tool_call_id"] for m in messages[2:]] == ["c1", "c2", "c3"]


def test_images_of_a_tool_result_follow_as_a_user_message() -> None:
    image = ImageBlock(media_type="image/png", data="iVBORw0KGgo=")
    parts = [tool(call_id="c1", output="[image]", images=[image]), tool(call_id="c2")]
    messages = to_wire(request(msg("assistant", *parts)))["messages"]
    assert [m["role"] for m in messages[1:]] == ["assistant", "tool", "tool", "user"]
    assert messages[2]["content"] == "[image]"
    content = messages[4]["content"]
    assert content[0]["type"] == "text" and "c1" in content[0]["text"]
    assert content[1] == {"type": "image_url",
                          "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}


def test_calls_written_as_text_go_back_as_text() -> None:
    turn = msg("assistant", TextPart('<tool_call>{"name": "read"}</tool_call>'),
               tool(from_text=True))
    messages = to_wire(request(turn))["messages"]
    assert "tool_calls" not in messages[1]
    assert messages[2] == {"role": "user", "content": "Result of read:\n1: x = 1"}


def test_tools_limits_and_options() -> None:
    spec = ToolSpec("read", "Read a file.", {"type": "object", "properties": {}})
    body = to_wire(
        request(msg("user", TextPart("hi")), tools=[spec], max_tokens=512, temperature=0.2,
                options={"extra_body": {"num_ctx": 8192}}),
        options={"include_usage": False, "max_tokens_field": "max_completion_tokens"},
    )
    assert body["tools"] == [{"type": "function", "function": {
        "name": "read", "description": "Read a file.", "parameters": spec.parameters}}]
    assert body["max_completion_tokens"] == 512 and "max_tokens" not in body
    assert body["temperature"] == 0.2 and body["num_ctx"] == 8192
    assert "stream_options" not in body


# -- from_wire -------------------------------------------------------------------------------


def play(chunks: Sequence[dict[str, Any]], *, done: bool = True) -> list[StreamEvent]:
    """The events of `chunks`, the stream ended by `[DONE]` unless `done` is false."""
    state = ChatStreamState()
    events: list[StreamEvent] = []
    for chunk in chunks:
        events += from_wire(chunk, state)
    if done:
        state.end()
    return events + finish(state)


def delta(finish_reason: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": finish_reason}]}


def test_text_and_reasoning_deltas() -> None:
    events = play([
        delta(role="assistant", content=""),
        delta(reasoning_content="let me"),
        delta(reasoning=" think"),
        delta(content="Hello"),
        delta(content=" world"),
        delta("stop"),
    ])
    assert events == [ReasoningChunk("let me"), ReasoningChunk(" think"), TextChunk("Hello"),
                      TextChunk(" world"), StreamEnd("stop", "stop")]


def test_tool_call_deltas() -> None:
    events = play([
        delta(role="assistant", content=None),
        delta(tool_calls=[{"index": 0, "id": "call_a", "type": "function",
                           "function": {"name": "read", "arguments": ""}}]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": '{"pa'}}]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": 'th": "a"}'}}]),
        delta(tool_calls=[{"index": 1, "id": "call_b", "function": {"name": "glob",
                                                                     "arguments": "{}"}}]),
        delta("tool_calls"),
    ])
    assert events == [
        ToolCallBegin(0, "call_a", "read"), ToolArgsChunk(0, '{"pa'),
        ToolArgsChunk(0, 'th": "a"}'), ToolCallBegin(1, "call_b", "glob"),
        ToolArgsChunk(1, "{}"), StreamEnd("tool_calls", "tool_calls"),
    ]


def test_every_call_numbered_zero_is_split_by_id() -> None:
    def call(call_id: str, name: str) -> dict[str, Any]:
        return {"index": 0, "id": call_id, "function": {"name": name, "arguments": "{}"}}

    events = play([delta(tool_calls=[call("a", "read")]), delta(tool_calls=[call("b", "glob")]),
                   delta("stop")])
    begins = [e for e in events if isinstance(e, ToolCallBegin)]
    assert begins == [ToolCallBegin(0, "a", "read"), ToolCallBegin(1, "b", "glob")]
    assert events[-1] == StreamEnd("tool_calls", "stop")  # calls were made, whatever it says


def test_arguments_before_the_name_wait_for_it_and_missing_ids_are_made_up() -> None:
    events = play([
        delta(tool_calls=[{"index": 0, "function": {"arguments": '{"a": '}}]),
        delta(tool_calls=[{"index": 0, "function": {"name": "read", "arguments": "1}"}}]),
    ])
    begin = events[0]
    assert isinstance(begin, ToolCallBegin) and begin.name == "read" and begin.call_id
    assert events[1:] == [ToolArgsChunk(0, '{"a": 1}'), StreamEnd("tool_calls", "")]


def test_a_whole_message_without_indexes() -> None:
    chunk = {"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": "Let me look.",
        "tool_calls": [{"id": "x", "type": "function",
                        "function": {"name": "read", "arguments": {"path": "a"}}},
                       {"id": "y", "type": "function",
                        "function": {"name": "glob", "arguments": "{}"}}]}}]}
    events = play([chunk])
    assert events[:3] == [TextChunk("Let me look."), ToolCallBegin(0, "x", "read"),
                          ToolArgsChunk(0, '{"path": "a"}')]
    assert ToolCallBegin(1, "y", "glob") in events


def test_usage_comes_once_before_the_end() -> None:
    usage = {"prompt_tokens": 120, "completion_tokens": 30,
             "prompt_tokens_details": {"cached_tokens": 100},
             "completion_tokens_details": {"reasoning_tokens": 12}}
    events = play([delta(content="hi"), delta("stop"), {"choices": [], "usage": usage}])
    report = events[-2]
    assert isinstance(report, UsageReport)
    assert (report.usage.input, report.usage.output) == (120, 30)
    assert (report.usage.cache_read, report.usage.reasoning) == (100, 12)
    assert events[-1] == StreamEnd("stop", "stop")


def test_null_usage_fields_count_as_zero() -> None:
    events = play([delta("stop", content="x"), {"choices": [], "usage": {
        "prompt_tokens": None, "completion_tokens": 3, "prompt_tokens_details": None}}])
    report = events[-2]
    assert isinstance(report, UsageReport) and report.usage.output == 3


@pytest.mark.parametrize(("raw", "reason"), [("stop", "stop"), ("length", "length"),
                                            ("content_filter", "other"), (None, "stop")])
def test_finish_reasons(raw: str | None, reason: str) -> None:
    assert play([delta(raw, content="x")])[-1] == StreamEnd(reason, raw or "")  # type: ignore[arg-type]


def test_exactly_one_stream_end() -> None:
    events = play([delta("stop", content="x"), delta("stop")])
    assert sum(isinstance(e, StreamEnd) for e in events) == 1


def test_nothing_at_all_is_a_retryable_error() -> None:
    with pytest.raises(RetryableError, match="before any output"):
        play([delta(role="assistant", content="")])


def test_output_then_neither_finish_reason_nor_done_is_a_cut_stream() -> None:
    with pytest.raises(RetryableError, match="ended mid-answer"):
        play([delta(content="The first half")], done=False)
    assert play([delta("stop", content="x")], done=False)[-1] == StreamEnd("stop", "stop")
    assert play([delta(content="x")], done=True)[-1] == StreamEnd("stop", "")


def test_only_malformed_chunks_is_a_retryable_error() -> None:
    state = ChatStreamState()
    state.malformed.append('{"choices": [')
    with pytest.raises(RetryableError, match="malformed stream"):
        finish(state)


def test_an_empty_answer_with_a_finish_reason_is_fine() -> None:
    assert play([delta(role="assistant", content=""), delta("stop")]) == [StreamEnd("stop", "stop")]


def test_an_error_in_the_stream_is_classified() -> None:
    with pytest.raises(RetryableError, match="overloaded"):
        play([{"error": {"message": "overloaded", "type": "server_error"}}])
    with pytest.raises(InvalidRequest, match="context"):
        play([{"error": {"message": "context too long", "code": 400}}])


# -- HTTP failures through httpx.MockTransport ------------------------------------------------


def fail_with(
    status: int, body: Any = None, headers: dict[str, str] | None = None, *, key: str | None = KEY
) -> BaseException:
    def handler(req: httpx.Request) -> httpx.Response:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return httpx.Response(status, content=content, headers=headers)

    return run_against(handler, key=key)


def run_against(handler: Callable[[httpx.Request], httpx.Response], *, key: str | None = KEY
                ) -> BaseException:
    async def main() -> BaseException:
        provider = OpenAIChatProvider("acme", "http://llm.test/v1", api_key=key,
                                      transport=httpx.MockTransport(handler))
        try:
            async for _ in provider.stream(request(msg("user", TextPart("hi")))):
                pass
        except Exception as exc:
            return exc
        finally:
            await provider.aclose()
        raise AssertionError("no error raised")

    return asyncio.run(main())


def test_401_is_an_auth_error_with_the_provider_message_and_no_key() -> None:
    error = fail_with(401, {"error": {"message": f"Incorrect API key provided: {KEY}."}})
    assert isinstance(error, AuthError)
    assert "Incorrect API key provided" in str(error) and "check the key of provider acme" in str(
        error)
    assert KEY not in str(error) and KEY not in repr(error)


def test_403_without_a_key_says_so() -> None:
    error = fail_with(403, {"message": "forbidden"}, key=None)
    assert isinstance(error, AuthError) and "has no key set" in str(error)


@pytest.mark.parametrize("status", [400, 404, 422])
def test_invalid_requests_are_fatal_with_the_message(status: int) -> None:
    error = fail_with(status, {"error": {"message": "model 'm' not found"}})
    assert isinstance(error, InvalidRequest) and "model 'm' not found" in str(error)


def test_429_with_retry_after() -> None:
    error = fail_with(429, {"error": {"message": "slow down"}}, {"retry-after": "3"})
    assert isinstance(error, RateLimited) and error.retry_after == 3.0 and error.status == 429


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503, 529])
def test_transient_statuses_are_retryable(status: int) -> None:
    error = fail_with(status, b"<html>Bad Gateway</html>")
    assert isinstance(error, RetryableError) and "Bad Gateway" in str(error)


def test_other_client_errors_are_fatal() -> None:
    assert isinstance(fail_with(402, {"detail": "pay up"}), FatalError)


def test_network_errors_are_retryable() -> None:
    def refuse(req: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    error = run_against(refuse)
    assert isinstance(error, RetryableError) and str(error).startswith("network:")
    assert "http://llm.test/v1" in str(error)


def test_a_json_answer_instead_of_a_stream_is_read_whole_or_rejected() -> None:
    async def main(body: bytes) -> list[StreamEvent]:
        def handler(req: httpx.Request) -> httpx.Response:
            return httpx.Response(200, content=body, headers={"content-type": "application/json"})

        provider = OpenAIChatProvider("acme", "http://llm.test/v1",
                                      transport=httpx.MockTransport(handler))
        try:
            return [e async for e in provider.stream(request(msg("user", TextPart("hi"))))]
        finally:
            await provider.aclose()

    whole = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi!"},
                          "finish_reason": "stop"}]}
    events = asyncio.run(main(json.dumps(whole).encode()))
    assert events == [TextChunk("hi!"), StreamEnd("stop", "stop")]
    with pytest.raises(RetryableError, match="malformed response"):
        asyncio.run(main(b"{malformed json: <<<chaos>>>"))


def test_the_key_is_sent_only_when_set_and_never_shown() -> None:
    seen: list[str | None] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req.headers.get("authorization"))
        return httpx.Response(200, json={"object": "list", "data": [{"id": "m1"}, {"id": "m2"}]})

    async def main(key: str | None) -> list[str]:
        provider = OpenAIChatProvider("acme", "http://llm.test/v1/", api_key=key,
                                      headers={"X-Title": "totem"},
                                      transport=httpx.MockTransport(handler))
        assert KEY not in repr(provider)
        try:
            return await provider.list_models()
        finally:
            await provider.aclose()

    assert asyncio.run(main(KEY)) == ["m1", "m2"]
    assert asyncio.run(main(None)) == ["m1", "m2"]
    assert seen == [f"Bearer {KEY}", None]


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"retry-after": "2.5"}, 2.5),
    ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
    ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
    ({"retry-after": "soon"}, None),
    ({}, None),
])
def test_parse_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    assert parse_retry_after(headers) == seconds
