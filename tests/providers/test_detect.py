"""Finding local servers: real servers on free loopback ports, probed all at once.

aimock answers Ollama's /api/tags, so on any port it is recognised as Ollama; the fake
OpenAI server shipped in the package stands for an OpenAI-compatible server (vLLM, LM
Studio); llama.cpp itself is probed when the CPU model is cached. LiteLLM is probed in
tests/e2e/test_litellm_proxy.py.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from tests.support.aimock import running_aimock
from tests.support.cpu_model import running_llama
from tests.support.local_http import Recorded, Reply, serving
from tests.support.ports import free_port
from totem.providers.catalog.detect import Found, detect_sync
from totem.testing.fake_server import FakeOpenAIServer


@contextlib.contextmanager
def _silent_listener() -> Iterator[int]:
    """A port that accepts connections and never answers (a hung server)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield sock.getsockname()[1]


NOT_FOUND = Reply(404, b"<html>no such page</html>", {"Content-Type": "text/html"})


@contextlib.contextmanager
def _web_app() -> Iterator[int]:
    """Some other web server (a dev server on 8000, say): 404 everywhere."""
    with serving(lambda _: NOT_FOUND) as server:
        yield _port(server.url)


def _port(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


def test_nothing_listening_finds_nothing() -> None:
    assert detect_sync(ports={"ollama": free_port(), "vllm": free_port()}) == []


def test_servers_are_recognised_by_what_they_answer() -> None:
    fixtures = [{"match": {"userMessage": "hi"}, "response": {"content": "hello"}}]
    openai_like = FakeOpenAIServer(models=["qwen-a", "qwen-b"])
    locked = FakeOpenAIServer(models=["secret"], api_key="sk-local-0123456789")
    with (
        running_aimock(fixtures) as aimock,
        openai_like.in_thread() as url,
        locked.in_thread() as locked_url,
        _silent_listener() as hung,
        _web_app() as web,
    ):
        ports = {"ollama": _port(aimock.url), "vllm": _port(url),
                 "lmstudio": _port(locked_url), "llamacpp": hung, "litellm": web,
                 "nothing": free_port()}
        found = detect_sync(ports=ports, timeout=1.0)
    assert [f.name for f in found] == ["ollama", "vllm", "lmstudio"]
    ollama, vllm, lmstudio = found
    assert ollama.kind == "ollama" and ollama.base_url == aimock.root
    assert ollama.models and not ollama.needs_key
    assert vllm == Found(name="vllm", kind="vllm", base_url=url, models=["qwen-a", "qwen-b"],
                         needs_key=False, note=vllm.note)
    assert "OpenAI-compatible" in vllm.note
    assert lmstudio.needs_key and lmstudio.models == []
    assert lmstudio.base_url == locked_url and "401" in lmstudio.note
    # every request carried no key at all
    assert all("authorization" not in r.headers for r in openai_like.requests + locked.requests)


def _meeting(barrier: threading.Barrier) -> Callable[[Recorded], Reply]:
    """A server whose model list answers only once every server has been asked."""

    def respond(seen: Recorded) -> Reply:
        if seen.target != "/v1/models":
            return NOT_FOUND
        try:
            barrier.wait(timeout=5)
        except threading.BrokenBarrierError:
            return Reply(500)
        return Reply(200, b'{"object": "list", "data": [{"id": "m", "object": "model"}]}',
                     {"Content-Type": "application/json"})

    return respond


def test_detection_probes_ports_concurrently() -> None:
    barrier = threading.Barrier(3)
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(serving(_meeting(barrier))) for _ in range(3)]
        ports = {name: _port(s.url) for name, s in zip("xyz", servers, strict=True)}
        found = detect_sync(ports=ports, timeout=3.0)
    # probed one after the other, the first would wait for the others and time out
    assert [(f.name, f.models) for f in found] == [("x", ["m"]), ("y", ["m"]), ("z", ["m"])]


@pytest.mark.cpu_model
def test_a_real_llama_cpp_server_is_recognised() -> None:
    with running_llama(context=2048, timeout=120) as port:
        found = detect_sync(ports={"vllm": port}, timeout=3.0)
    assert [(f.name, f.kind) for f in found] == [("llamacpp", "llamacpp")]
    assert found[0].base_url == f"http://127.0.0.1:{port}/v1"
    assert len(found[0].models) == 1
