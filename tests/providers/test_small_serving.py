"""Knowing a local model from its server, bounded sampling, the call guard, step mode."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from tests.support.llama_like import FIXTURES, Answer, LlamaLike, RecordingProxy, fixture
from totem.messages import Message, TextPart, ToolPart
from totem.providers.base import (
    InvalidRequest,
    ModelRequest,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
    ToolSpec,
)
from totem.providers.catalog.profiles import profile_for, profile_for_served
from totem.providers.localserver.sampling import sampling_for
from totem.providers.localserver.served import served_model
from totem.providers.localserver.serverinfo import (
    facts_from_llama,
    facts_from_lmstudio,
    facts_from_ollama,
    facts_from_vllm,
    is_local,
    probe,
    probe_soon,
)
from totem.providers.localserver.stepmode import (
    args_schema,
    loop_cut,
    step_events,
    step_request,
    step_schema,
)
from totem.providers.openai_chat import ChatStreamState, finish, from_wire, to_wire
from totem.providers.transport.overflow import context_overflow, window_in_error
from totem.run.callguard import CallGuard, guard_calls
from totem.settings.config import ConfigError, ProviderConfig
from totem.tools.lazy import specs_for
from totem.tools.registry import builtin_tools

# -- knowing the model from the server ----------------------------------------------------------


def test_recorded_llama_props_name_the_model_file_and_the_real_window() -> None:
    facts = facts_from_llama(fixture("llama_server_props.json"),
                             fixture("llama_server_models.json"))
    assert facts.engine == "llamacpp"
    assert facts.names[0] == "qwen2.5-coder-0.5b-instruct-q4_k_m"
    assert facts.context_window == 8192  # the server's -c, not the family's 32,768
    assert profile_for("local").family == "unknown"
    served = profile_for_served("local", facts.names)
    assert served.family == "qwen2.5-coder-small" and served.small
    # what decides: the parameter count and the chat template the server gave
    assert facts.params == 630_167_424 and facts.family == "qwen2.5"
    sized = profile_for_served("local", (), params=facts.params, family=facts.family)
    assert sized.family == "qwen2.5-small" and sized.small


def test_a_known_served_name_wins_over_the_file_name() -> None:
    assert profile_for_served("qwen3:4b", ["qwen2.5-coder-0.5b"]).family == "qwen3"


def test_vllm_lmstudio_and_ollama_answers() -> None:
    vllm = facts_from_vllm({"object": "list", "data": [
        {"id": "coder", "object": "model", "owned_by": "vllm",
         "root": "/models/Qwen2.5-Coder-1.5B-Instruct", "max_model_len": 16384}]}, "coder")
    assert vllm is not None and vllm.context_window == 16384
    assert profile_for_served("coder", vllm.names).family == "qwen2.5-coder-small"
    assert facts_from_vllm({"data": [{"id": "x", "owned_by": "llamacpp"}]}, "x") is None
    lms = facts_from_lmstudio({"id": "qwen2.5-coder-1.5b-instruct", "arch": "qwen2",
                               "loaded_context_length": 4096, "max_context_length": 32768})
    assert lms.context_window == 4096 and lms.engine == "lmstudio"
    ollama = facts_from_ollama({"details": {"family": "qwen2", "parameter_size": "494.03M"},
                                "model_info": {"general.basename": "Qwen2.5-Coder",
                                               "general.size_label": "0.5B",
                                               "qwen2.context_length": 32768}})
    assert ollama.context_window == 32768
    assert profile_for_served("mine", ollama.names).family == "qwen2.5-coder-small"


def test_only_local_servers_are_asked() -> None:
    assert is_local("openai", "http://127.0.0.1:8080/v1")
    assert is_local("openai", "http://localhost:1234/v1")
    assert is_local("vllm", "http://192.168.1.20:8000/v1")
    assert is_local("ollama", "")
    assert not is_local("openai", "https://api.openai.com/v1")
    assert not is_local("ollama", "https://ollama.com")
    assert not is_local("openai", "http://203.0.113.9/v1")  # a documentation address
    assert not is_local("openai", "http://[2001:db8::1]:8080/v1")
    assert is_local("openai", "http://[fd00::5]:8080/v1")
    # a hosted provider: nothing is asked (the address is never contacted)
    assert probe("openai", "http://203.0.113.9/v1", "gpt-4o") is None
    hosted = ProviderConfig("cloud", "openai", base_url="https://api.example.com/v1")
    served = served_model(hosted, "local")
    assert served.facts is None and served.sampling.max_tokens is None
    assert served.sampling.temperature is None and not served.sampling.constrained


def test_probe_asks_a_real_http_server_once_per_process() -> None:
    # each test asks for a model name of its own: answers are kept per process by address
    # and name, and a later server may be given a port an earlier test's server had
    with LlamaLike([]) as server:
        first = probe("openai", server.base_url, "local-once")
        again = probe("openai", server.base_url, "local-once")
        asked = list(server.gets)
    assert first is again and first is not None
    assert first.context_window == 8192
    assert sorted(asked) == ["/api/v0/models/local-once", "/props", "/v1/models"]  # once each


def test_a_probe_started_early_is_waited_for_and_asked_once() -> None:
    with LlamaLike([]) as server:
        probe_soon("openai", server.base_url, "local-early")
        facts = probe("openai", server.base_url, "local-early")
        probe_soon("openai", server.base_url, "local-early")  # known: not asked again
        asked = list(server.gets)
    assert facts is not None and facts.engine == "llamacpp"
    assert sorted(asked) == ["/api/v0/models/local-early", "/props", "/v1/models"]


def test_a_chunked_answer_is_read_too() -> None:
    # a pass-through that always answers chunked, even to HTTP/1.0, in front of the server
    with LlamaLike([]) as server, RecordingProxy(server.base_url.removesuffix("/v1")) as proxy:
        facts = probe("openai", proxy.base_url, "local-chunked")
    assert facts is not None and facts.context_window == 8192


def test_a_server_still_loading_is_asked_again_next_time() -> None:
    with LlamaLike([], loading=True) as server:
        assert probe("openai", server.base_url, "local-loading") is None
        server.loading = False
        facts = probe("openai", server.base_url, "local-loading")
    assert facts is not None and facts.context_window == 8192


def test_served_model_of_an_alias_is_small_calm_bounded_and_constrained() -> None:
    with LlamaLike([]) as server:
        pconf = ProviderConfig("local", "openai", base_url=server.base_url)
        served = served_model(pconf, "local")
    assert served.profile.small and served.facts is not None
    sampling = served.sampling
    assert sampling.temperature == 0.2 and sampling.max_tokens == 2048
    assert sampling.max_calls == 8 and sampling.guard_repeats and sampling.constrained
    assert sampling.engine == "llamacpp"


def test_a_local_provider_with_probe_false_is_not_asked() -> None:
    with LlamaLike([]) as server:
        pconf = ProviderConfig("local", "openai", base_url=server.base_url,
                               options={"probe": False})
        served = served_model(pconf, "local")
        asked = list(server.gets)
    assert asked == [] and served.facts is None and served.profile.family == "unknown"
    assert served.sampling.max_tokens == 8192  # still local: bounded


def test_sampling_settings_come_from_the_provider_then_the_model() -> None:
    with LlamaLike([]) as server:
        pconf = ProviderConfig(
            "local", "openai", base_url=server.base_url,
            options={"temperature": 0.5, "tool_mode": "native"},
            models={"local": {"max_tokens": 512, "temperature": 0}},
        )
        sampling = served_model(pconf, "local").sampling
        assert sampling.temperature == 0.0 and sampling.max_tokens == 512
        assert not sampling.constrained
        wrong = ProviderConfig("local", "openai", base_url=server.base_url,
                               options={"tool_mode": "grammar"})
        with pytest.raises(ConfigError, match="tool_mode"):
            served_model(wrong, "local")


def test_a_large_local_model_is_bounded_but_keeps_its_sampling() -> None:
    sampling = sampling_for(profile_for("qwen2.5-coder-32b"), None, local=True)
    assert sampling.max_tokens == 8192 and sampling.temperature is None
    assert sampling.max_calls is None and not sampling.constrained


# -- the call guard ----------------------------------------------------------------------------


def _llama_call_chunks(calls: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """Streamed calls as llama-server sends them: id and name first, arguments in pieces."""
    chunks = []
    for index, (name, args) in enumerate(calls):
        head = {"index": index, "id": f"call_{index}", "type": "function",
                "function": {"name": name, "arguments": ""}}
        chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [head]}}]})
        for piece in (args[: len(args) // 2], args[len(args) // 2 :]):
            part = {"index": index, "function": {"arguments": piece}}
            chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [part]}}]})
    chunks.append({"choices": [{"index": 0, "finish_reason": "tool_calls", "delta": {}}]})
    return chunks


class _Source:
    """The events of chunks, through the real OpenAI decoder; notes how far it was read."""

    def __init__(self, chunks: list[dict[str, Any]]) -> None:
        self.chunks, self.read, self.closed = chunks, 0, False

    async def events(self) -> AsyncIterator[StreamEvent]:
        state = ChatStreamState()
        try:
            for chunk in self.chunks:
                self.read += 1
                for event in from_wire(chunk, state):
                    yield event
            for event in finish(state):
                yield event
        finally:
            self.closed = True


async def _collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [e async for e in events]


def _recorded_call_repeated(times: int) -> list[dict[str, Any]]:
    """The real llama-server stream of one `read` call, its call made `times` times over."""
    text = (FIXTURES / "llama_server_native_call.sse").read_text(encoding="utf-8")
    chunks = [json.loads(line[6:]) for line in text.splitlines()
              if line.startswith("data: {")]
    calls = [c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("tool_calls")]
    tail = [c for c in chunks[chunks.index(calls[-1]) + 1 :]]
    out = chunks[: chunks.index(calls[0])]
    for copy in range(times):
        for chunk in calls:
            again = json.loads(json.dumps(chunk))
            for call in again["choices"][0]["delta"]["tool_calls"]:
                call["index"] = copy
                if "id" in call:
                    call["id"] += str(copy)
            out.append(again)
    return out + tail


def test_a_call_repeated_a_third_time_ends_the_answer_there() -> None:
    chunks = _recorded_call_repeated(228)
    source = _Source(chunks)
    guard = CallGuard(max_calls=8)
    out = asyncio.run(_collect(guard_calls(source.events(), guard)))
    begins = [e for e in out if isinstance(e, ToolCallBegin)]
    assert [b.name for b in begins] == ["read"]  # the first is kept
    args = "".join(e.text for e in out if isinstance(e, ToolArgsChunk))
    assert json.loads(args) == {"path": "README.md"}
    assert guard.stopped and guard.repeated == 2
    assert source.read < 40 and source.closed  # not read to the end (228 x 10 chunks)
    assert isinstance(out[-1], StreamEnd) and out[-1].reason == "tool_calls"


def test_calls_past_the_cap_are_dropped_and_counted() -> None:
    calls = [("read", json.dumps({"path": f"f{i}.py"})) for i in range(11)]
    guard = CallGuard(max_calls=8)
    out = asyncio.run(_collect(guard_calls(_Source(_llama_call_chunks(calls)).events(), guard)))
    begins = [e for e in out if isinstance(e, ToolCallBegin)]
    assert [b.index for b in begins] == list(range(8))
    assert guard.dropped == 3 and not guard.stopped


def test_without_the_guard_every_call_passes() -> None:
    calls = [("read", '{"path": "a"}')] * 3
    out = asyncio.run(_collect(_Source(_llama_call_chunks(calls)).events()))
    assert len([e for e in out if isinstance(e, ToolCallBegin)]) == 3


# -- step mode ---------------------------------------------------------------------------------


def _tools() -> list[ToolSpec]:
    return specs_for(builtin_tools())


def test_step_schema_allows_one_call_of_an_offered_tool_or_an_answer() -> None:
    specs = _tools()
    schema = step_schema(specs)
    names = [s["properties"]["tool"]["const"] for s in schema["anyOf"]]
    # edit is folded into write: the file's size picks the text's form, not the model
    assert names == [s.name for s in specs if s.name != "edit"] + ["answer"]
    read = args_schema(next(s for s in specs if s.name == "read").parameters)
    assert read == {"properties": {"path": {"type": "string"}, "offset": {"type": "integer"},
                                   "limit": {"type": "integer"}},
                    "required": ["path"], "type": "object", "additionalProperties": False}
    # in a step, optional numbers and switches keep the tool's defaults
    reads = next(s for s in schema["anyOf"] if s["properties"].get("tool") == {"const": "read"})
    assert reads["properties"]["args"]["properties"] == {"path": {"type": "string"}}
    # a write step names the file only: its text comes in the next, unconstrained request
    writes = next(s for s in schema["anyOf"] if s["properties"].get("tool") == {"const": "write"})
    assert writes["properties"]["args"]["properties"] == {"path": {"type": "string"}}
    answers = schema["anyOf"][-1]
    assert answers["properties"]["args"]["properties"] == {}
    text = json.dumps(schema)
    assert '"description": "' not in text and '"null"' not in text  # a property may be named so


def test_step_request_on_the_wire_has_the_schema_and_no_native_tools() -> None:
    call = ToolPart(call_id="call_1", name="read", input={"path": "README.md"},
                    raw_input='{"path": "README.md"}', state="completed", output="# Jam")
    history = [Message("m1", "s", "user", [TextPart("What is this project?")]),
               Message("m2", "s", "assistant", [call])]
    request = ModelRequest("local", "You are totem.", history, tools=_tools(),
                           max_tokens=2048, temperature=0.2)
    body = to_wire(step_request(request, engine="llamacpp"))
    assert "tools" not in body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == step_schema(_tools())
    assert body["max_tokens"] == 2048 and body["temperature"] == 0.2
    system, user, assistant, result = body["messages"]
    assert '{"tool": "NAME", "args": {...}}' in system["content"]
    assert "- read(path): " in system["content"]
    assert "- grep(pattern, path?, include?): " in system["content"]
    assert json.loads(assistant["content"]) == {"tool": "read", "args": {"path": "README.md"}}
    assert "tool_calls" not in assistant
    assert result["role"] == "user"
    assert result["content"].startswith('Result of read {"path": "README.md"}:\n# Jam\n\n')
    assert 'You have the result of read {"path": "README.md"} above.' in result["content"]
    # the request is said again next to the results: small models lose it
    assert "The request is: What is this project?" in result["content"]
    # the next step is a choice between a tool and the answer step; the answer's text
    # (in the form the request asks for) comes in a request of its own
    assert result["content"].endswith('or it is done, take the answer step.')
    held = to_wire(step_request(request, engine="llamacpp", answer=False))
    options = held["response_format"]["json_schema"]["schema"]["anyOf"]
    assert all("tool" in o["properties"] for o in options)  # a call, never an answer
    ollama = step_request(request, engine="ollama")
    assert ollama.options["format"] == step_schema(_tools())


async def _events(*events: StreamEvent) -> AsyncIterator[StreamEvent]:
    for event in events:
        yield event


def test_a_recorded_step_answer_becomes_a_tool_call() -> None:
    # the real 0.5B model's answer to "Read the file README.md" under the step schema
    recorded = '{"tool": "read", "args": {"path": "README.md"}}'
    out = asyncio.run(_collect(step_events(_events(
        TextChunk(recorded[:9]), TextChunk(recorded[9:]), StreamEnd("stop", "stop")))))
    begin, args, end = out
    assert isinstance(begin, ToolCallBegin) and begin.name == "read"
    assert isinstance(args, ToolArgsChunk) and json.loads(args.text) == {"path": "README.md"}
    assert isinstance(end, StreamEnd) and end.reason == "tool_calls"
    answer = asyncio.run(_collect(step_events(_events(
        TextChunk('{"answer": "It is Marmalade."}'), StreamEnd("stop")))))
    assert isinstance(answer[0], TextChunk) and answer[0].text == "It is Marmalade."
    loose = asyncio.run(_collect(step_events(_events(TextChunk("plain words"), StreamEnd("stop")))))
    assert isinstance(loose[0], TextChunk) and loose[0].text == "plain words"


# -- context overflow --------------------------------------------------------------------------


def test_overflow_messages_are_recognised() -> None:
    newer = ("the request exceeds the available context size, try increasing it")
    assert context_overflow(InvalidRequest(f"HTTP 400: {newer}", status=400))
    older = ("error in stream: the request exceeds the available context size. try increasing "
             "the context size or enable context shift")
    assert context_overflow(InvalidRequest(older, status=400))
    openai = ("HTTP 400: This model's maximum context length is 8192 tokens. "
              "(context_length_exceeded)")
    assert context_overflow(InvalidRequest(openai))
    assert window_in_error(openai) == 8192
    assert not context_overflow(InvalidRequest("HTTP 400: invalid tool schema"))


def test_an_answer_llama_server_sends_as_an_error_line_is_raised() -> None:
    # this llama.cpp build sends a failure inside a stream as an `error:` field, not `data:`
    body = (b'error: {"code":400,"message":"the request exceeds the available context size. '
            b'try increasing the context size or enable context shift",'
            b'"type":"invalid_request_error"}\n\ndata: [DONE]\n\n')
    with LlamaLike([Answer(200, body, "text/event-stream")]) as server:
        from totem.providers.openai_chat import OpenAIChatProvider

        provider = OpenAIChatProvider("local", server.base_url)

        async def go() -> None:
            try:
                async for _ in provider.stream(ModelRequest("local", "", [])):
                    pass
            finally:
                await provider.aclose()

        with pytest.raises(InvalidRequest) as caught:
            asyncio.run(go())
    assert context_overflow(caught.value)


def test_a_step_answer_that_loops_is_cut_after_its_first_copy() -> None:
    # the real 1.5B model's answer to the README's example, looping to its token limit
    unit = ("The project has a README.md file that provides information about the project. "
            "The project has a .gitignore file that lists what Git ignores. ")
    chunks = ['{"answer": "It is a coding agent. ', *([unit] * 40)]
    produced: list[str] = []

    async def stream() -> AsyncIterator[StreamEvent]:
        for chunk in chunks:
            produced.append(chunk)
            yield TextChunk(chunk)
        yield StreamEnd("length", "length")

    out = asyncio.run(_collect(step_events(stream())))
    text = "".join(e.text for e in out if isinstance(e, TextChunk))
    assert text.startswith("It is a coding agent. The project has a README.md file")
    assert text.count("README.md") == 1 and len(text) < 2 * len(unit) + 40
    assert out[-1] == StreamEnd("stop", "repeated")
    assert len(produced) < 10  # the stream was left long before its end
    assert loop_cut("a plain answer with nothing repeated in it at all") is None
