"""AnthropicProvider over HTTP, through httpx's transport seam (`httpx.MockTransport`):
headers, error classification, a whole JSON answer, model paging, configuration."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from totem.messages import Message, TextPart
from totem.providers.anthropic import API_VERSION, AnthropicProvider, from_config
from totem.providers.base import (
    AuthError,
    FatalError,
    InvalidRequest,
    ModelRequest,
    ProviderError,
    RateLimited,
    RetryableError,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
    UsageReport,
)
from totem.settings.config import ProviderConfig, Secret

KEY = "sk-ant-SECRET-123456"
Handler = Callable[[httpx.Request], httpx.Response]
SSE = {"content-type": "text/event-stream"}


def request(text: str = "hi") -> ModelRequest:
    message = Message(id="m", session_id="s", role="user", parts=[TextPart(text)])
    return ModelRequest(model="claude-opus-4-7", system="sys", messages=[message])


def sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


HELLO = sse(
    {"type": "message_start", "message": {"usage": {"input_tokens": 3, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi!"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}},
    {"type": "message_stop"},
)


def collect(handler: Handler, *, key: str | None = KEY, **kw: Any) -> list[StreamEvent]:
    async def main() -> list[StreamEvent]:
        provider = AnthropicProvider("claude", kw.pop("base_url", "https://api.example"),
                                     api_key=key, transport=httpx.MockTransport(handler), **kw)
        try:
            return [event async for event in provider.stream(request())]
        finally:
            await provider.aclose()

    return asyncio.run(main())


def failing(status: int, body: dict[str, Any] | str, **headers: str) -> Handler:
    def handler(req: httpx.Request) -> httpx.Response:
        content = body if isinstance(body, str) else json.dumps(body)
        return httpx.Response(status, headers=headers, content=content.encode())

    return handler


def anthropic_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message},
            "request_id": "req_011"}


def test_the_request_carries_key_version_and_the_body() -> None:
    seen: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return httpx.Response(200, headers=SSE, content=HELLO)

    events = collect(handler, headers={"anthropic-beta": "interleaved-thinking-2025-05-14"},
                     options={"cache": False, "max_tokens": 1000})
    assert events[0] == TextChunk("Hi!") and events[-1] == StreamEnd("stop", "end_turn")
    assert isinstance(events[1], UsageReport) and events[1].usage.output == 2
    req = seen[0]
    assert str(req.url) == "https://api.example/v1/messages"
    assert req.headers["x-api-key"] == KEY and req.headers["anthropic-version"] == API_VERSION
    assert req.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert "authorization" not in req.headers
    body = json.loads(req.content)
    assert body["max_tokens"] == 1000 and body["stream"] is True
    assert body["system"] == [{"type": "text", "text": "sys"}]


def test_a_base_url_ending_in_v1_is_accepted() -> None:
    urls: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        urls.append(str(req.url))
        return httpx.Response(200, headers=SSE, content=HELLO)

    collect(handler, base_url="http://127.0.0.1:9/v1/")
    assert urls == ["http://127.0.0.1:9/v1/messages"]


@pytest.mark.parametrize(("status", "kind", "error"), [
    (400, "invalid_request_error", InvalidRequest),
    (404, "not_found_error", InvalidRequest),
    (413, "request_too_large", InvalidRequest),
    (402, "billing_error", FatalError),
    (500, "api_error", RetryableError),
    (529, "overloaded_error", RateLimited),
    (503, "api_error", RetryableError),
    (408, "timeout_error", RetryableError),
])
def test_http_errors_are_classified_with_anthropics_message(
    status: int, kind: str, error: type[ProviderError]
) -> None:
    with pytest.raises(error) as raised:
        collect(failing(status, anthropic_error(kind, "max_tokens: must be positive")))
    assert raised.value.status == status
    assert "max_tokens: must be positive" in raised.value.message
    assert type(raised.value) is error


def test_429_carries_retry_after() -> None:
    with pytest.raises(RateLimited) as raised:
        collect(failing(429, anthropic_error("rate_limit_error", "slow down"), **{
            "retry-after": "7"}))
    assert raised.value.retry_after == 7.0 and "slow down" in raised.value.message


def test_auth_errors_name_the_provider_never_the_key() -> None:
    echo = anthropic_error("authentication_error", f"invalid x-api-key {KEY}")
    with pytest.raises(AuthError) as raised:
        collect(failing(401, echo))
    text = f"{raised.value} {raised.value!r} {raised.value.message}"
    assert KEY not in text and "check the key of provider claude" in text
    with pytest.raises(AuthError, match="provider claude has no key: set ANTHROPIC_API_KEY"):
        collect(failing(403, anthropic_error("permission_error", "no")), key=None)
    provider = AnthropicProvider("claude", api_key=KEY)
    assert KEY not in repr(provider) and "key=set" in repr(provider)


def test_an_error_event_mid_stream_keeps_what_was_shown() -> None:
    body = HELLO.split(b"event: message_delta")[0] + sse(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    seen: list[StreamEvent] = []

    async def main() -> None:
        provider = AnthropicProvider("claude", "http://x", transport=httpx.MockTransport(
            lambda req: httpx.Response(200, headers=SSE, content=body)))
        try:
            async for event in provider.stream(request()):
                seen.append(event)
        finally:
            await provider.aclose()

    with pytest.raises(RateLimited, match="overloaded_error: Overloaded") as raised:
        asyncio.run(main())
    assert raised.value.status == 529 and seen == [TextChunk("Hi!")]


def test_network_errors_are_retryable_and_a_bad_url_is_not() -> None:
    def refuse(req: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=req)

    with pytest.raises(RetryableError, match="network: cannot connect"):
        collect(refuse)
    with pytest.raises(InvalidRequest, match="invalid base URL"):
        asyncio.run(_stream_once(AnthropicProvider("claude", "ftp://nowhere", api_key=KEY)))


async def _stream_once(provider: AnthropicProvider) -> None:
    try:
        async for _ in provider.stream(request()):
            pass
    finally:
        await provider.aclose()


def test_a_whole_json_answer_is_read_like_a_stream() -> None:
    answer = {"type": "message", "role": "assistant", "stop_reason": "tool_use",
              "usage": {"input_tokens": 4, "output_tokens": 9},
              "content": [{"type": "text", "text": "Let me look."},
                          {"type": "tool_use", "id": "toolu_1", "name": "read",
                           "input": {"path": "a.py"}}]}
    events = collect(failing(200, answer, **{"content-type": "application/json"}))
    assert events[:3] == [TextChunk("Let me look."), ToolCallBegin(0, "toolu_1", "read"),
                          ToolArgsChunk(0, '{"path": "a.py"}')]
    assert events[-1] == StreamEnd("tool_calls", "tool_use")
    with pytest.raises(RetryableError, match="malformed response.*<<<"):
        collect(failing(200, "{malformed <<<", **{"content-type": "application/json"}))


def test_list_models_follows_the_pages() -> None:
    pages = {None: {"data": [{"id": "claude-opus-4-7"}, {"id": "claude-sonnet-4-6"}],
                    "has_more": True, "first_id": "claude-opus-4-7",
                    "last_id": "claude-sonnet-4-6"},
             "claude-sonnet-4-6": {"data": [{"id": "claude-haiku-4-5"}], "has_more": False,
                                   "last_id": "claude-haiku-4-5"}}
    asked: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        asked.append(req)
        return httpx.Response(200, json=pages[req.url.params.get("after_id")])

    async def main() -> list[str]:
        provider = AnthropicProvider("claude", api_key=KEY,
                                     transport=httpx.MockTransport(handler))
        try:
            return await provider.list_models()
        finally:
            await provider.aclose()

    assert asyncio.run(main()) == ["claude-opus-4-7", "claude-sonnet-4-6", "claude-haiku-4-5"]
    assert [r.url.path for r in asked] == ["/v1/models", "/v1/models"]
    assert all(r.headers["x-api-key"] == KEY for r in asked)


def test_from_config_defaults_and_the_key_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    cfg = ProviderConfig(name="claude", kind="anthropic",
                         options={"headers": {"anthropic-beta": "x"}, "cache_ttl": "1h"})
    provider = from_config(cfg, None)
    assert provider.base_url == "https://api.anthropic.com"
    assert provider._headers()["x-api-key"] == "sk-from-env"
    assert provider.headers == {"anthropic-beta": "x"} and provider.options == {"cache_ttl": "1h"}
    keyed = from_config(ProviderConfig(name="c", kind="anthropic", base_url="http://gw/v1",
                                       key=Secret("sk-config")), "sk-config")
    assert keyed.base_url == "http://gw" and keyed._headers()["x-api-key"] == "sk-config"
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert "x-api-key" not in from_config(cfg, None)._headers()
