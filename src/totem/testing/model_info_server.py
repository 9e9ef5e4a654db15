"""A local model server that says what it serves, as llama.cpp, Ollama, LM Studio or vLLM do.

Real HTTP on 127.0.0.1 (a thread of `http.server`), for tests of what totem learns from a
server about its model: the parameter count, the chat template, the architecture, the
window. The answers have the shapes the real servers give:

    llamacpp   GET /props, GET /v1/models   recorded from the real llama-server (build
                                            b1-4227c9b) serving a GGUF saved as model.gguf:
                                            llama-server-props.json, and the chat template
                                            qwen2.5-chat-template.jinja beside this module
    ollama     POST /api/show, GET /api/tags as Ollama's API documentation gives them
    lmstudio   GET /api/v0/models[/ID], GET /v1/models   as LM Studio's REST API v0 does
    vllm       GET /v1/models                entries owned by "vllm", with root and
                                            max_model_len

POST /v1/chat/completions (every engine but Ollama) streams `reply` as llama-server streams
an answer, and keeps each request body in `bodies`; every GET or POST path is kept in
`asked`. Anything else is a 404, as on the real servers.

    with ModelInfoServer("llamacpp", ServedFile(params=1_777_088_000)) as server:
        server.base_url    # http://127.0.0.1:PORT/v1 (Ollama: http://127.0.0.1:PORT)
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath
from typing import Any, Literal, TypeAlias

__all__ = ["Engine", "ModelInfoServer", "ServedFile", "qwen25_template"]

Engine: TypeAlias = Literal["llamacpp", "ollama", "lmstudio", "vllm"]
Json: TypeAlias = dict[str, Any]
_HERE = Path(__file__).parent


@cache
def qwen25_template() -> str:
    """The chat template the real llama-server gave for Qwen2.5-Coder-0.5B-Instruct."""
    return (_HERE / "qwen2.5-chat-template.jinja").read_text(encoding="utf-8")


@cache
def _recorded_props() -> Json:
    data: Json = json.loads((_HERE / "llama-server-props.json").read_text(encoding="utf-8"))
    return data


@dataclass(frozen=True, slots=True)
class ServedFile:
    """The model a fake server serves. The defaults are the real 0.5B GGUF's figures as
    llama-server reported them, saved under the plain name `model.gguf`."""

    path: str = "/models/model.gguf"
    alias: str | None = "local"  # llama-server --alias; None: the path is the id
    params: int | None = 630_167_424  # None: the server does not say
    size: int = 485_452_288  # bytes of the weights
    trained_window: int = 32_768
    window: int = 8_192  # the server's -c, or LM Studio's loaded window
    architecture: str = "qwen2"
    template: str = field(default_factory=qwen25_template)
    quantization: str = "Q4_K_M"
    embedding: int = 896
    vocab: int = 151_936

    @property
    def id(self) -> str:
        return self.alias or self.path

    @property
    def stem(self) -> str:
        name = PurePosixPath(self.path).name
        return name[:-5] if name.endswith(".gguf") else name


def _size_label(params: int | None) -> str:
    """A parameter count as Ollama writes it: `494.03M`, `1.5B`, `7.6B`."""
    if params is None:
        return ""
    if params >= 1_000_000_000:
        return f"{params / 1e9:.1f}B"
    return f"{params / 1e6:.2f}M"


def llama_props(model: ServedFile) -> Json:
    """`GET /props` of llama-server serving `model`."""
    props: Json = json.loads(json.dumps(_recorded_props()))
    props["default_generation_settings"]["n_ctx"] = model.window
    props["model_path"] = model.path
    props["chat_template"] = model.template
    return props


def llama_models(model: ServedFile) -> Json:
    """`GET /v1/models` of llama-server serving `model` (the Ollama-like `models` list it
    also gives says nothing: empty strings, as the real one)."""
    meta = {"vocab_type": 2, "n_vocab": model.vocab, "n_ctx_train": model.trained_window,
            "n_embd": model.embedding, "n_params": model.params, "size": model.size}
    return {
        "models": [{"name": model.id, "model": model.id, "modified_at": "", "size": "",
                    "digest": "", "type": "model", "description": "", "tags": [""],
                    "capabilities": ["completion"], "parameters": "",
                    "details": {"parent_model": "", "format": "gguf", "family": "",
                                "families": [""], "parameter_size": "",
                                "quantization_level": ""}}],
        "object": "list",
        "data": [{"id": model.id, "object": "model", "created": int(time.time()),
                  "owned_by": "llamacpp", "meta": meta}],
    }


def _ollama_details(model: ServedFile) -> Json:
    return {"parent_model": "", "format": "gguf", "family": model.architecture,
            "families": [model.architecture], "parameter_size": _size_label(model.params),
            "quantization_level": model.quantization}


def ollama_show(model: ServedFile) -> Json:
    """`POST /api/show` of Ollama for `model` (its template in Ollama's own form is not
    needed: the markers that say the family are the same)."""
    info: Json = {"general.architecture": model.architecture, "general.file_type": 15,
                  "general.quantization_version": 2,
                  f"{model.architecture}.context_length": model.trained_window,
                  f"{model.architecture}.embedding_length": model.embedding,
                  "tokenizer.ggml.model": "gpt2"}
    if model.params is not None:
        info["general.parameter_count"] = model.params
    return {"modelfile": f"# Modelfile generated by \"ollama show\"\nFROM {model.path}\n",
            "parameters": "stop                           \"<|im_end|>\"",
            "template": model.template, "details": _ollama_details(model),
            "model_info": info, "capabilities": ["completion", "tools"]}


def ollama_tags(model: ServedFile) -> Json:
    """`GET /api/tags` of Ollama holding `model`."""
    return {"models": [{"name": model.id, "model": model.id,
                        "modified_at": "2026-12-02T08:00:00.000000000Z", "size": model.size,
                        "digest": "0" * 64, "details": _ollama_details(model)}]}


def lmstudio_entry(model: ServedFile) -> Json:
    """One model of LM Studio's `GET /api/v0/models`, loaded."""
    return {"id": model.id, "object": "model", "type": "llm", "publisher": "local",
            "arch": model.architecture, "compatibility_type": "gguf",
            "quantization": model.quantization, "state": "loaded",
            "max_context_length": model.trained_window, "loaded_context_length": model.window}


def vllm_models(model: ServedFile) -> Json:
    """vLLM's `GET /v1/models`: no parameter count, the path served as `root`."""
    return {"object": "list", "data": [{
        "id": model.id, "object": "model", "created": int(time.time()), "owned_by": "vllm",
        "root": model.path, "parent": None, "max_model_len": model.window}]}


def _sse(reply: str, model: str) -> bytes:
    """`reply` streamed as llama-server streams an answer: the text, then a closing chunk
    with the finish reason and the usage, then `[DONE]`."""
    def chunk(delta: Json, finish: str | None = None, **more: Any) -> str:
        body = {"choices": [{"finish_reason": finish, "index": 0, "delta": delta}],
                "created": int(time.time()), "id": "chatcmpl-fake", "model": model,
                "system_fingerprint": "b1-4227c9b", "object": "chat.completion.chunk", **more}
        return f"data: {json.dumps(body)}\n\n"

    usage = {"completion_tokens": 1, "prompt_tokens": 1, "total_tokens": 2}
    text = chunk({"role": "assistant", "content": None}) + chunk({"content": reply})
    text += chunk({}, "stop", usage=usage) + "data: [DONE]\n\n"
    return text.encode()


@dataclass
class ModelInfoServer:
    """A server of `engine` serving `model` on 127.0.0.1 (see the module doc)."""

    engine: Engine
    model: ServedFile = field(default_factory=ServedFile)
    reply: str = '{"answer": "Done."}'
    asked: list[str] = field(default_factory=list)
    bodies: list[Json] = field(default_factory=list)

    def _get(self, path: str) -> Json | None:
        model = self.model
        if self.engine == "llamacpp":
            return {"/props": llama_props(model), "/v1/models": llama_models(model),
                    "/models": llama_models(model)}.get(path)
        if self.engine == "ollama":
            return ollama_tags(model) if path == "/api/tags" else None
        if self.engine == "lmstudio":
            entry = lmstudio_entry(model)
            if path == f"/api/v0/models/{model.id}":
                return entry
            if path == "/api/v0/models":
                return {"object": "list", "data": [entry]}
            if path == "/v1/models":
                return {"object": "list", "data": [
                    {"id": model.id, "object": "model", "owned_by": "organization_owner"}]}
            return None
        return vllm_models(model) if path == "/v1/models" else None

    def __enter__(self) -> ModelInfoServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _missing(self) -> None:
                self._send(404, b'{"error":{"code":404,"message":"File Not Found",'
                                b'"type":"not_found_error"}}')

            def do_GET(self) -> None:  # noqa: N802
                owner.asked.append(self.path)
                answer = owner._get(self.path)
                if answer is None:
                    return self._missing()
                self._send(200, json.dumps(answer).encode())

            def do_POST(self) -> None:  # noqa: N802
                owner.asked.append(self.path)
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(data or b"{}")
                except ValueError:
                    return self._send(400, b'{"error":"invalid JSON"}')
                if owner.engine == "ollama" and self.path == "/api/show":
                    if body.get("model") not in (owner.model.id, f"{owner.model.id}:latest"):
                        message = f"model '{body.get('model')}' not found"
                        return self._send(404, json.dumps({"error": message}).encode())
                    return self._send(200, json.dumps(ollama_show(owner.model)).encode())
                if owner.engine != "ollama" and self.path == "/v1/chat/completions":
                    owner.bodies.append(body)
                    return self._send(200, _sse(owner.reply, owner.model.id),
                                      "text/event-stream")
                self._missing()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True)
        self._thread.start()
        return self

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def base_url(self) -> str:
        """The base URL a provider of this engine is configured with."""
        return self.root if self.engine == "ollama" else f"{self.root}/v1"

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
