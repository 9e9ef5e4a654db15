"""Finding local servers: real servers on free loopback ports, probed all at once.

aimock answers Ollama's /api/tags, so on any port it is recognised as Ollama; the fake
OpenAI server shipped in the package stands for an OpenAI-compatible server (vLLM, LM
Studio); llama.cpp itself is probed when the CPU model is cached. LiteLLM is probed in
tests/e2e/test_litellm_proxy.py.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.aimock import running_aimock
from totem.providers.catalog.detect import Found, detect_sync
from totem.testing.fake_server import FakeOpenAIServer


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def _silent_listener() -> Iterator[int]:
    """A port that accepts connections and never answers (a hung server)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield sock.getsockname()[1]


class _NotFound(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        body = b"<html>no such page</html>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def _web_app() -> Iterator[int]:
    """Some other web server (a dev server on 8000, say): 404 everywhere."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _port(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


def test_nothing_listening_finds_nothing() -> None:
    assert detect_sync(ports={"ollama": _free_port(), "vllm": _free_port()}) == []


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
                 "nothing": _free_port()}
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


def _barrier_handler(barrier: threading.Barrier) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(_NotFound):
        def do_GET(self) -> None:  # noqa: N802
            if self.path != "/v1/models":
                return super().do_GET()
            try:
                barrier.wait(timeout=5)  # answers only once every server has been asked
            except threading.BrokenBarrierError:
                self.send_error(500)
                return
            body = b'{"object": "list", "data": [{"id": "m", "object": "model"}]}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


def test_detection_probes_ports_concurrently() -> None:
    barrier = threading.Barrier(3)
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), _barrier_handler(barrier))
               for _ in range(3)]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    try:
        ports = {name: s.server_address[1] for name, s in zip("xyz", servers, strict=True)}
        found = detect_sync(ports=ports, timeout=3.0)
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    # probed one after the other, the first would wait for the others and time out
    assert [(f.name, f.models) for f in found] == [("x", ["m"]), ("y", ["m"]), ("z", ["m"])]


CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "totem-dev"


@pytest.mark.cpu_model
def test_a_real_llama_cpp_server_is_recognised() -> None:
    model, server = CACHE / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", CACHE / "llama-server"
    if not (model.is_file() and server.is_file()):
        if os.environ.get("TOTEM_REQUIRE_CPU_MODEL") == "1":
            pytest.fail("the CPU model is required but missing: run scripts/cpu-model.sh")
        pytest.skip("CPU model not cached (scripts/cpu-model.sh)")
    port = _free_port()
    proc = subprocess.Popen(
        [str(server), "-m", str(model), "-c", "2048", "-t", "2", "--host", "127.0.0.1",
         "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("llama-server did not start")
                time.sleep(0.3)
        found = detect_sync(ports={"vllm": port}, timeout=3.0)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert [(f.name, f.kind) for f in found] == [("llamacpp", "llamacpp")]
    assert found[0].base_url == f"http://127.0.0.1:{port}/v1"
    assert len(found[0].models) == 1
