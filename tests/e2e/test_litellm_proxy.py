"""A real LiteLLM proxy (PyPI `litellm[proxy]`, installed by scripts/litellm.sh into a venv of
its own) with a master key, in front of aimock (OpenAI chat, streamed tool calls) and of a
recording stand-in for Ollama's /api/chat (aimock's journal drops Ollama's `options`).

Skipped when the LiteLLM venv is missing, unless TOTEM_REQUIRE_LITELLM=1.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.aimock import Aimock, running_aimock
from tests.support.local_http import Recorded, Reply, serving
from tests.support.ports import free_port, http_ok
from tests.support.processes import running
from tests.support.required import DEV_CACHE, unavailable
from totem.providers.catalog.detect import detect_sync

pytestmark = pytest.mark.litellm

LITELLM = Path(os.environ.get("TOTEM_LITELLM") or DEV_CACHE / "litellm-venv/bin/litellm")
TOTEM = [sys.executable, "-m", "totem"]

FIXTURES = [
    {"match": {"userMessage": "what does hello.txt say?", "hasToolResult": True},
     "response": {"content": "It says hello world."}},
    {"match": {"userMessage": "what does hello.txt say?"},
     "response": {"toolCalls": [{"name": "read", "arguments": '{"path": "hello.txt"}'}]}},
]


def _ollama_chat(bodies: list[dict[str, Any]]) -> Callable[[Recorded], Reply]:
    """Answers a POST as Ollama's /api/chat does (one NDJSON line) and keeps every raw body."""

    def respond(seen: Recorded) -> Reply:
        if seen.method != "POST":
            return Reply(501)  # what Ollama's stand-in supports is /api/chat alone
        bodies.append({"path": seen.target, "body": json.loads(seen.body or b"null")})
        line = json.dumps({"model": "qwen2.5-coder:1.5b", "created_at": "2026-01-01T00:00:00Z",
                           "message": {"role": "assistant", "content": "Hello from Ollama."},
                           "done": True, "done_reason": "stop", "prompt_eval_count": 10,
                           "eval_count": 4}).encode() + b"\n"
        return Reply(200, line, {"Content-Type": "application/x-ndjson"})

    return respond


def _config(aimock: Aimock, ollama: str) -> str:
    return f"""
model_list:
  - model_name: mock-model
    litellm_params: {{model: openai/mock-model, api_base: "{aimock.url}", api_key: unused}}
  - model_name: local-qwen
    litellm_params: {{model: "ollama_chat/qwen2.5-coder:1.5b", api_base: "{ollama}"}}
  - model_name: priced
    litellm_params: {{model: openai/priced, api_base: "{aimock.url}", api_key: unused}}
    model_info:
      max_input_tokens: 100000
      max_output_tokens: 2000
      input_cost_per_token: 0.0000025
      output_cost_per_token: 0.00001
      supports_function_calling: true
general_settings:
  master_key: os.environ/LITELLM_MASTER_KEY
"""


@dataclass
class Proxy:
    root: str
    port: int
    key: str
    aimock: Aimock
    ollama_bodies: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture(scope="module")
def proxy() -> Iterator[Proxy]:
    if not LITELLM.is_file():
        unavailable(f"LiteLLM proxy not installed ({LITELLM}): run scripts/litellm.sh",
                    required_by="TOTEM_REQUIRE_LITELLM")
    key = "sk-" + secrets.token_hex(16)
    bodies: list[dict[str, Any]] = []
    with (
        running_aimock(FIXTURES) as aimock,
        serving(_ollama_chat(bodies)) as ollama,
        tempfile.TemporaryDirectory(prefix="totem-litellm-") as tmp,
    ):
        config = Path(tmp) / "config.yaml"
        config.write_text(_config(aimock, ollama.url), encoding="utf-8")
        port = free_port()
        root = f"http://127.0.0.1:{port}"
        env = dict(os.environ, LITELLM_MASTER_KEY=key, LITELLM_LOCAL_MODEL_COST_MAP="True",
                   LITELLM_TELEMETRY="False", NO_PROXY="*")
        command = [str(LITELLM), "--config", str(config), "--host", "127.0.0.1", "--port",
                   str(port)]
        with running(command, log=Path(tmp) / "litellm.log", what="the LiteLLM proxy",
                     ready=lambda: http_ok(f"{root}/health/liveliness", timeout=2),
                     timeout=180, interval=0.5, env=env, grace=15):
            yield Proxy(root, port, key, aimock, bodies)


@dataclass
class User:
    """A person with their own config folder and a project, running `totem` as a process."""

    tmp: Path

    @property
    def root(self) -> Path:
        return self.tmp / "project"

    def env(self) -> dict[str, str]:
        env = dict(os.environ, XDG_CONFIG_HOME=str(self.tmp / "config"),
                   XDG_DATA_HOME=str(self.tmp / "data"))
        env.pop("TOTEM_CONFIG", None)
        return env

    def totem(self, *args: str, stdin: str = "", timeout: float = 120
              ) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*TOTEM, *args], cwd=self.root, env=self.env(), input=stdin,
                              text=True, capture_output=True, timeout=timeout)


@pytest.fixture
def user(tmp_path: Path, proxy: Proxy) -> User:
    person = User(tmp_path)
    person.root.mkdir()
    (person.root / "hello.txt").write_text("hello world\n")
    added = person.totem("providers", "add", "litellm", "--url", proxy.root, "--name", "gw",
                         stdin=proxy.key + "\n")
    assert added.returncode == 0, added.stderr
    assert proxy.key not in added.stdout + added.stderr
    return person


def test_detection_reports_the_proxy_as_needing_a_key(proxy: Proxy) -> None:
    found = detect_sync(ports={"litellm": proxy.port, "ollama": free_port()}, timeout=5.0)
    assert len(found) == 1
    assert (found[0].name, found[0].kind, found[0].base_url) == ("litellm", "litellm", proxy.root)
    assert found[0].needs_key and found[0].models == []


def test_models_shows_what_the_proxy_knows_and_unknown_for_the_rest(user: User,
                                                                    proxy: Proxy) -> None:
    done = user.totem("models", "gw", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["id"]: row for row in json.loads(done.stdout)}
    assert set(rows) == {"mock-model", "local-qwen", "priced"}
    mock = rows["mock-model"]
    assert [mock[k] for k in ("context_window", "max_output", "tools", "reasoning", "vision",
                              "price")] == [None] * 6
    assert mock["source"] == "unknown"
    priced = rows["priced"]
    assert (priced["context_window"], priced["max_output"], priced["tools"]) == (100000, 2000,
                                                                                  True)
    assert priced["price"] == {"input": 2.5, "output": 10.0, "cache_read": None,
                               "cache_write": None}
    assert priced["source"] == "provider"
    # /model/info says nothing of the Ollama model; the table knows the model behind it
    qwen = rows["local-qwen"]
    assert (qwen["context_window"], qwen["source"], qwen["tools_unreliable"]) == (
        32768, "builtin", True)
    table = user.totem("models", "gw")
    line = next(x for x in table.stdout.splitlines() if x.startswith("mock-model"))
    assert line.split()[1:] == ["unknown"] * 7
    assert proxy.key not in table.stdout + table.stderr + done.stdout + done.stderr


def test_a_streamed_tool_call_runs_end_to_end(user: User, proxy: Proxy) -> None:
    proxy.aimock.clear_journal()
    done = user.totem("run", "--format", "json", "--model", "gw/mock-model",
                      "what does hello.txt say?")
    assert done.returncode == 0, done.stdout + done.stderr
    seen = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    start = next(e for e in seen if e["type"] == "tool_start")
    end = next(e for e in seen if e["type"] == "tool_end")
    assert start["name"] == "read" and "hello world" in end["output"] and not end["is_error"]
    text = "".join(e["text"] for e in seen if e["type"] == "text")
    assert "It says hello world." in text
    assert seen[-2]["type"] == "run_finished" and seen[-2]["reason"] == "finished"
    chats = [r for r in proxy.aimock.journal() if r["path"].endswith("/chat/completions")]
    assert len(chats) == 2 and all(c["body"]["stream"] for c in chats)
    assert proxy.key not in done.stdout + done.stderr


def test_an_ollama_model_behind_the_proxy_gets_its_window(user: User, proxy: Proxy) -> None:
    proxy.ollama_bodies.clear()
    done = user.totem("run", "--format", "json", "--model", "gw/local-qwen", "say hello")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Hello from Ollama." in done.stdout
    chat = next(b for b in proxy.ollama_bodies if b["path"] == "/api/chat")["body"]
    options = chat["options"]
    # totem sent num_ctx / repeat_penalty / max_tokens; LiteLLM put them in Ollama's options
    assert options["num_ctx"] % 2048 == 0 and options["num_ctx"] >= 4096
    assert options["repeat_penalty"] == 1.1
    assert options["num_predict"] == 8192  # a small model: its output limit
    assert chat["model"] == "qwen2.5-coder:1.5b" and chat["tools"]


def test_a_wrong_key_is_said_plainly(user: User, proxy: Proxy) -> None:
    wrong = "sk-wrong-" + secrets.token_hex(8)
    added = user.totem("providers", "add", "litellm", "--url", proxy.root, "--name", "bad",
                       stdin=wrong + "\n")
    assert added.returncode == 0
    done = user.totem("providers", "test", "bad")
    assert done.returncode == 1
    assert "refused" in done.stdout and "key" in done.stdout
    assert wrong not in done.stdout + done.stderr
    ok = user.totem("providers", "test", "gw")
    assert ok.returncode == 0 and "gw: OK, 3 models" in ok.stdout
