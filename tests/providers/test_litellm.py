"""The LiteLLM provider against the fake OpenAI server: /model/info parsing, the fallback to
/models, and what an Ollama model behind the proxy gets in each request (seen in the
server's journal). The real proxy is in tests/e2e/test_litellm_proxy.py."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.support.local_http import Recorded, Reply, serving
from totem.messages import Message, TextPart
from totem.providers.base import AuthError, ModelRequest, StreamEvent, TextChunk, ToolSpec
from totem.providers.catalog.catalogue import Price
from totem.providers.litellm import LiteLLMModel, LiteLLMProvider, from_config, parse_model_info
from totem.settings.config import ProviderConfig
from totem.testing.fake_server import FakeOpenAIServer, RecordedRequest

KEY = "sk-proxy-master-7c1d9e2b40aa"

# Trimmed from a real LiteLLM 1.108.7 answer: a model with no model_info (nulls), an Ollama
# one (Ollama did not answer /api/show, so model_info is nearly empty), one with model_info.
MODEL_INFO: dict[str, Any] = {"data": [
    {"model_name": "mock-gpt",
     "litellm_params": {"api_base": "http://127.0.0.1:1/v1", "model": "openai/mock-gpt"},
     "model_info": {"id": "ae8c", "key": "openai/mock-gpt", "max_tokens": None,
                    "max_input_tokens": None, "max_output_tokens": None,
                    "input_cost_per_token": None, "output_cost_per_token": None,
                    "litellm_provider": "openai", "supports_function_calling": None,
                    "supports_vision": None, "supports_reasoning": None}},
    {"model_name": "local-qwen",
     "litellm_params": {"api_base": "http://127.0.0.1:2",
                        "model": "ollama_chat/qwen2.5-coder:1.5b"},
     "model_info": {"id": "80eb"}},
    {"model_name": "priced",
     "litellm_params": {"model": "openai/priced"},
     "model_info": {"max_input_tokens": 100000, "max_output_tokens": 2000,
                    "input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05,
                    "cache_read_input_token_cost": 1.25e-06,
                    "supports_function_calling": True, "supports_reasoning": False,
                    "litellm_provider": "openai"}},
    {"model_name": "priced", "litellm_params": {"model": "openai/second-deployment"},
     "model_info": {}},
    {"model_name": "legacy", "litellm_params": {"model": "ollama/llama3.1:8b"},
     "model_info": {"max_tokens": 8192}},
]}


def test_model_info_is_parsed_nulls_staying_unknown() -> None:
    models = {m.name: m for m in parse_model_info(MODEL_INFO)}
    assert list(models) == ["mock-gpt", "local-qwen", "priced", "legacy"]  # one per name
    gpt = models["mock-gpt"]
    assert (gpt.underlying, gpt.backend, gpt.ollama) == ("openai/mock-gpt", "openai", False)
    assert {k for k, v in gpt.reported.items() if v is not None} == {"underlying"}
    assert models["local-qwen"].ollama and models["legacy"].ollama
    priced = models["priced"].reported
    assert priced["underlying"] == "openai/priced"
    assert (priced["context_window"], priced["max_output"], priced["tools"]) == (100000, 2000, True)
    assert priced["reasoning"] is False
    assert priced["price"] == Price(2.5, 10.0, 1.25, None)
    # the legacy max_tokens is the window when no output limit is given
    assert models["legacy"].reported["context_window"] == 8192
    assert parse_model_info({"error": "no"}) == [] and parse_model_info([]) == []


class _ProxyLike(FakeOpenAIServer):
    """The fake OpenAI server plus a /model/info route, as a LiteLLM proxy has."""

    def __init__(self, info: dict[str, Any] | None, **options: Any) -> None:
        super().__init__(**options)
        self.info = info

    async def _respond(self, request: RecordedRequest, writer: asyncio.StreamWriter) -> None:
        if request.path == "/model/info" and self.info is not None:
            payload = json.dumps(self.info).encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload))
            await writer.drain()
            return
        await super()._respond(request, writer)


def _request(model: str, text: str = "hello", *, tools: bool = True) -> ModelRequest:
    message = Message(id="m1", session_id="s1", role="user", parts=[TextPart(text)])
    specs = [ToolSpec("read", "Read a file.", {"type": "object",
                                               "properties": {"path": {"type": "string"}}})]
    return ModelRequest(model=model, system="You are a careful coding agent.",
                        messages=[message], tools=specs if tools else [])


async def _run(provider: LiteLLMProvider, requests: list[ModelRequest]) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    try:
        for request in requests:
            events += [e async for e in provider.stream(request)]
    finally:
        await provider.aclose()
    return events


def _chats(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.path.endswith("/chat/completions")]


def test_an_ollama_model_behind_the_proxy_gets_num_ctx_repeat_penalty_and_max_tokens() -> None:
    server = _ProxyLike(MODEL_INFO, api_key=KEY)
    with server.in_thread() as url:
        root = url.removesuffix("/v1")
        provider = LiteLLMProvider("gw", root, api_key=KEY)
        events = asyncio.run(_run(provider, [_request("local-qwen"), _request("mock-gpt")]))
    assert sum(isinstance(e, TextChunk) for e in events) == 2
    qwen, gpt = _chats(server)
    assert qwen["model"] == "local-qwen"
    assert qwen["num_ctx"] % 2048 == 0 and qwen["num_ctx"] >= 4096
    assert qwen["repeat_penalty"] == 1.1
    assert qwen["max_tokens"] == 8192  # a small model: its output limit (profiles)
    assert not {"num_ctx", "repeat_penalty", "max_tokens"} & set(gpt)
    infos = [r for r in server.requests if r.path == "/model/info"]
    assert len(infos) == 1  # asked once, kept
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in server.requests)


def test_num_ctx_follows_the_conversation_and_never_shrinks() -> None:
    cfg = ProviderConfig("gw", "litellm", models={
        "big": {"underlying": "ollama_chat/qwen2.5-coder:32b"},
        "capped": {"underlying": "ollama/mystery", "context": 6144}})
    server = FakeOpenAIServer()
    with server.in_thread() as url:
        provider = from_config(ProviderConfig("gw", "litellm", base_url=url,
                                              models=cfg.models), None)
        long_text = "word " * 20_000  # about 100,000 characters
        asyncio.run(_run(provider, [_request("big"), _request("big", long_text),
                                    _request("big"), _request("capped", long_text)]))
    first, grown, after, capped = _chats(server)
    # a short conversation: (prompt + 4096 for the answer) x 1.25, rounded up to 2048
    assert first["num_ctx"] == 6144
    assert grown["num_ctx"] > 100_000 / 3.5
    assert after["num_ctx"] == grown["num_ctx"]  # shrinking would make Ollama reload
    assert "max_tokens" not in first  # not a small model
    assert capped["num_ctx"] == 6144  # the model's own window is the cap
    # /model/info was not asked: the configuration said what is behind each name
    assert not [r for r in server.requests if r.path == "/model/info"]


def test_options_change_what_is_sent() -> None:
    models = {"q": {"underlying": "ollama_chat/qwen2.5:7b"}}
    server = FakeOpenAIServer()
    with server.in_thread() as url:
        fixed = LiteLLMProvider("gw", url, options={"num_ctx": 16384, "repeat_penalty": None},
                                config=ProviderConfig("gw", "litellm", models=models))
        asyncio.run(_run(fixed, [_request("q")]))
        extra = LiteLLMProvider("gw", url, options={"extra_body": {"num_ctx": 3000}},
                                config=ProviderConfig("gw", "litellm", models=models))
        asyncio.run(_run(extra, [_request("q")]))
    first, second = _chats(server)
    assert first["num_ctx"] == 16384 and "repeat_penalty" not in first
    assert second["num_ctx"] == 3000 and second["repeat_penalty"] == 1.1


def test_without_model_info_the_models_come_from_the_models_list() -> None:
    server = FakeOpenAIServer(models=["alpha", "gpt-4o"])
    with server.in_thread() as url:
        provider = LiteLLMProvider("gw", url.removesuffix("/v1"))

        async def main() -> list[Any]:
            try:
                return [await provider.model_entries(), await provider.model_infos()]
            finally:
                await provider.aclose()

        entries, infos = asyncio.run(main())
    assert entries == [LiteLLMModel("alpha"), LiteLLMModel("gpt-4o")]
    assert infos[0].source == "unknown" and infos[0].context_window is None
    assert infos[1].source == "builtin" and infos[1].context_window == 128_000
    # and a request still goes out, with nothing added
    assert [r.path for r in server.requests] == ["/model/info", "/v1/models", "/model/info",
                                                 "/v1/models"]


def _refusing(seen: Recorded) -> Reply:
    """What a LiteLLM proxy without a database answers: 500 without a key, 400 with a
    wrong one (bodies copied from LiteLLM 1.108.7)."""
    if "authorization" not in seen.headers:
        return Reply(500, b"Internal Server Error", {"Content-Type": "text/plain; charset=utf-8"})
    return Reply(400, b'{"error":{"message":"No connected db.","type":"no_db_connection",'
                      b'"param":null,"code":"400"}}', {"Content-Type": "application/json"})


@pytest.mark.parametrize("key", [None, "sk-wrong-key-0123456789"])
def test_a_refused_key_is_an_auth_error_not_a_retry(key: str | None) -> None:
    with serving(_refusing) as server:
        root = server.url

        async def main() -> None:
            provider = LiteLLMProvider("gw", root, api_key=key)
            try:
                with pytest.raises(AuthError) as caught:
                    await provider.model_entries()
                assert "key" in caught.value.message
                if key:
                    assert key not in caught.value.message
                with pytest.raises(AuthError):
                    await _run(provider, [_request("anything")])
            finally:
                await provider.aclose()

        asyncio.run(main())


def test_repr_and_errors_never_show_the_key() -> None:
    provider = LiteLLMProvider("gw", "http://127.0.0.1:4000/v1", api_key=KEY)
    assert KEY not in repr(provider) and "key=set" in repr(provider)
    assert provider.root == "http://127.0.0.1:4000"
    assert provider.base_url == "http://127.0.0.1:4000/v1"
