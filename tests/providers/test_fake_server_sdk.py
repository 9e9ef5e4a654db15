"""The fake OpenAI server, checked by the official `openai` SDK, then driven by our adapter."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar

import openai
import pytest

from tests.support.streams import no_wait, user
from totem.abort import AbortSignal
from totem.providers.base import (
    AuthError,
    ModelRequest,
    RetryableError,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
    UsageReport,
)
from totem.providers.openai_chat import OpenAIChatProvider
from totem.providers.transport.retry import stream_with_retry
from totem.testing.fake_server import FakeOpenAIServer, ScriptItem, running_in_thread

T = TypeVar("T")
TOOLS: list[Any] = [{"type": "function", "function": {
    "name": "read", "description": "Read a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
HELLO: list[Any] = [{"role": "user", "content": "hello"}]


def sdk(url: str) -> Iterator[openai.OpenAI]:
    client = openai.OpenAI(base_url=url, api_key="sk-fake", max_retries=0)
    try:
        yield client
    finally:
        client.close()


def with_client(turns: Sequence[ScriptItem], use: Callable[[openai.OpenAI], T]) -> T:
    with running_in_thread(turns) as url:
        for client in sdk(url):
            return use(client)
    raise AssertionError("unreachable")


# -- the SDK as a validator --------------------------------------------------------------------


def test_sdk_reads_streamed_text_and_usage() -> None:
    def use(client: openai.OpenAI) -> tuple[str, Any, Any]:
        stream = client.chat.completions.create(
            model="fake-model", messages=HELLO, stream=True,
            stream_options={"include_usage": True})
        text, finish, usage = "", None, None
        for chunk in stream:
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices:
                text += choice.delta.content or ""
                finish = choice.finish_reason or finish
        return text, finish, usage

    text, finish, usage = with_client([{"text": "Hello from the fake."}], use)
    assert (text, finish) == ("Hello from the fake.", "stop")
    assert usage.prompt_tokens == 10
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_sdk_stream_helper_assembles_tool_calls() -> None:
    def use(client: openai.OpenAI) -> Any:
        with client.chat.completions.stream(model="fake-model", messages=HELLO,
                                            tools=TOOLS) as stream:
            return stream.get_final_completion()

    turns = [{"calls": [{"tool": "read", "args": {"path": "a.py"}},
                        {"tool": "read", "args": {"path": "b.py"}}], "text": "Reading both."}]
    final = with_client(turns, use)
    choice = final.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Reading both."
    calls = choice.message.tool_calls
    assert [c.function.name for c in calls] == ["read", "read"]
    assert [json.loads(c.function.arguments) for c in calls] == [{"path": "a.py"}, {"path": "b.py"}]
    assert calls[0].id != calls[1].id


def test_sdk_sees_reasoning_content_as_an_extra_delta_field() -> None:
    def use(client: openai.OpenAI) -> str:
        stream = client.chat.completions.create(model="fake-model", messages=HELLO, stream=True)
        parts = []
        for chunk in stream:
            for choice in chunk.choices:
                parts.append(getattr(choice.delta, "reasoning_content", None) or "")
        return "".join(parts)

    assert with_client([{"reasoning": "hmm, a greeting", "text": "Hi"}], use) == "hmm, a greeting"


def test_sdk_reads_a_whole_completion_and_the_model_list() -> None:
    def use(client: openai.OpenAI) -> tuple[Any, list[str]]:
        done = client.chat.completions.create(model="fake-model", messages=HELLO, tools=TOOLS)
        return done, [m.id for m in client.models.list()]

    done, models = with_client([{"tool": "read", "args": {"path": "x"}}], use)
    call = done.choices[0].message.tool_calls[0]
    assert (call.function.name, json.loads(call.function.arguments)) == ("read", {"path": "x"})
    assert done.usage is not None and models == ["fake-model"]


def test_sdk_maps_scripted_errors_to_its_own_exceptions() -> None:
    def use(client: openai.OpenAI) -> list[type[BaseException]]:
        seen: list[type[BaseException]] = []
        for _ in range(3):
            try:
                client.chat.completions.create(model="fake-model", messages=HELLO)
            except openai.APIStatusError as exc:
                seen.append(type(exc))
        return seen

    turns = [{"error": "rate_limited"}, {"error": "server"}, {"error": "auth"}]
    assert with_client(turns, use) == [openai.RateLimitError, openai.InternalServerError,
                                       openai.AuthenticationError]


def test_the_journal_records_every_request() -> None:
    with running_in_thread([{"text": "a"}]) as url:
        for client in sdk(url):
            client.chat.completions.create(model="fake-model", messages=HELLO)
        with urllib.request.urlopen(f"{url}/_requests") as response:
            journal = json.load(response)
    assert journal[0]["path"] == "/v1/chat/completions"
    assert journal[0]["body"]["messages"] == HELLO and journal[0]["size"] > 0


# -- our adapter against the fake ----------------------------------------------------------------


def ask(text: str = "hello") -> ModelRequest:
    return ModelRequest(model="fake-model", system="sys", messages=[user(text)])


def serve(
    turns: Sequence[ScriptItem],
    use: Callable[[OpenAIChatProvider, FakeOpenAIServer], Awaitable[T]],
    **provider: Any,
) -> T:
    async def main() -> T:
        server = FakeOpenAIServer(turns, api_key=provider.pop("server_key", None))
        url = await server.start()
        client = OpenAIChatProvider("fake", url, **provider)
        try:
            return await use(client, server)
        finally:
            await client.aclose()
            await server.stop()

    return asyncio.run(main())


async def events_of(provider: OpenAIChatProvider, *, tries: int = 1) -> list[StreamEvent]:
    stream = stream_with_retry(lambda: provider.stream(ask()), abort=AbortSignal(),
                               max_tries=tries, sleep=no_wait)
    return [event async for event in stream]


def test_adapter_streams_text_tool_calls_and_usage_over_http() -> None:
    async def use(p: OpenAIChatProvider, s: FakeOpenAIServer) -> list[list[StreamEvent]]:
        return [await events_of(p), await events_of(p)]

    text, call = serve([{"reasoning": "hm", "text": "Hi there"},
                        {"tool": "read", "args": {"path": "a.py"}}], use)
    assert [type(e).__name__ for e in text] == ["ReasoningChunk", "TextChunk", "UsageReport",
                                                "StreamEnd"]
    assert text[1] == TextChunk("Hi there") and text[-1] == StreamEnd("stop", "stop")
    begin, args, usage, end = call
    assert isinstance(begin, ToolCallBegin) and begin.name == "read"
    assert args == ToolArgsChunk(0, '{"path": "a.py"}')
    assert isinstance(usage, UsageReport) and end == StreamEnd("tool_calls", "tool_calls")


@pytest.mark.parametrize("failure", ["rate_limited", "server", "disconnect", "cut", "malformed"])
def test_transient_failures_before_output_are_retried(failure: str) -> None:
    async def use(p: OpenAIChatProvider, s: FakeOpenAIServer) -> list[StreamEvent]:
        return await events_of(p, tries=3)

    events = serve([{"error": failure}, {"text": "recovered"}], use)
    assert TextChunk("recovered") in events


def test_a_stream_cut_after_output_raises() -> None:
    async def use(p: OpenAIChatProvider, s: FakeOpenAIServer) -> list[str]:
        seen: list[str] = []
        stream = stream_with_retry(lambda: p.stream(ask()), abort=AbortSignal())
        with pytest.raises(RetryableError, match="network"):
            async for event in stream:
                if isinstance(event, TextChunk):
                    seen.append(event.text)
        return seen

    assert serve([{"text": "half an answer", "cut": True}, {"text": "never"}], use) == [
        "half an answer"]


def test_a_hanging_server_times_out_as_a_retryable_error() -> None:
    async def use(p: OpenAIChatProvider, s: FakeOpenAIServer) -> BaseException:
        with pytest.raises(RetryableError, match="network") as raised:
            await events_of(p)
        return raised.value

    serve([{"error": "hang"}], use, timeout=0.2)


def test_the_key_is_sent_only_when_configured_and_checked_by_the_server() -> None:
    async def use(p: OpenAIChatProvider, s: FakeOpenAIServer) -> list[str | None]:
        await events_of(p)
        return [r.headers.get("authorization") for r in s.requests]

    assert serve([{"text": "ok"}], use, api_key="sk-local") == ["Bearer sk-local"]
    assert serve([{"text": "ok"}], use) == [None]

    async def denied(p: OpenAIChatProvider, s: FakeOpenAIServer) -> str:
        with pytest.raises(AuthError) as raised:
            await events_of(p, tries=5)
        assert len(s.requests) == 1  # not retried
        return str(raised.value)

    message = serve([{"text": "ok"}], denied, api_key="sk-wrong-key", server_key="sk-right")
    assert "Incorrect API key" in message and "sk-wrong-key" not in message


def test_the_request_body_is_what_to_wire_built() -> None:
    async def use(p: OpenAIChatProvider, s: FakeOpenAIServer) -> dict[str, Any]:
        await events_of(p)
        body: dict[str, Any] = s.requests[0].body
        return body

    body = serve([{"text": "ok"}], use)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "system", "content": "sys"},
                                {"role": "user", "content": "hello"}]
