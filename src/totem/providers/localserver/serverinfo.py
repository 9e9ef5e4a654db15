"""What a local model server says of the model it serves: engine, size, family, real window.

A served name says little (llama-server `--alias local`, a GGUF saved as `model.gguf`, LM
Studio, gateways), so for a local provider totem asks the server once per process and base
URL + model:

    llama.cpp   GET {root}/props            model_path, chat_template,
                                            default_generation_settings.n_ctx
                GET {base}/models           data[].meta.n_params, id (the alias)
    vLLM        GET {base}/models           data[].owned_by "vllm", max_model_len, root
    LM Studio   GET {root}/api/v0/models/M  loaded_context_length, max_context_length, arch,
                                            params_string (when it says)
    Ollama      POST {root}/api/show        model_info general.parameter_count,
                                            *.context_length, general.architecture,
                                            template, details.parameter_size and family

The parameter count says whether the model is small, the chat template (else the
architecture) its family (`catalog.profiles`); the names are kept for when neither is said.

Only local providers are asked (a loopback or private address, or Ollama at its default
one): a hosted provider pays nothing. The questions go over bare sockets with a short
timeout, started early in a thread (`probe_soon`); a server that answers none gives `None`.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit

from totem.providers.catalog.profiles import family_of
from totem.providers.localserver.address import is_local_url

__all__ = [
    "Engine",
    "ServerFacts",
    "facts_from_llama",
    "facts_from_lmstudio",
    "facts_from_ollama",
    "facts_from_vllm",
    "is_local",
    "probe",
    "probe_soon",
]

Engine: TypeAlias = Literal["llamacpp", "vllm", "lmstudio", "ollama"]
PROBE_TIMEOUT = 2.0
_MAX_ANSWER = 4_000_000  # bytes read of one answer at most
_OPENAI_KINDS = frozenset({"openai", "openai-compatible", "llamacpp", "lmstudio", "vllm", "other"})


@dataclass(frozen=True, slots=True)
class ServerFacts:
    """What the server said: its engine, names of the model it serves, its window in tokens,
    the model's parameter count and the family its chat template or architecture says."""

    engine: Engine
    names: tuple[str, ...] = ()  # model file stem, GGUF general.name, architecture ...
    context_window: int | None = None
    params: int | None = None  # parameters, as the server counts them (None: not said)
    family: str | None = None  # a family name of catalog.profiles (`qwen2.5`), when said


def is_local(kind: str, base_url: str) -> bool:
    """A server on this computer or the local network (the same test as the fail-fast of a
    refused connection: address.is_local_url)."""
    if kind == "ollama" and not base_url:
        return True  # its default address is this computer
    return is_local_url(base_url)


def _stem(path: str) -> str:
    """`/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf` -> `qwen2.5-coder-1.5b-instruct-q4_k_m`."""
    name = PureWindowsPath(path).name if "\\" in path else PurePosixPath(path).name
    return name[:-5] if name.lower().endswith(".gguf") else name


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


_SIZE_LABEL = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMBT])\s*", re.IGNORECASE)
_SCALE = {"K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}


def _params_of(label: Any) -> int | None:
    """The parameter count a size label gives: `1.5B`, `494.03M`, `8.0B` (None for another
    text, or none)."""
    found = _SIZE_LABEL.fullmatch(label) if isinstance(label, str) else None
    if found is None:
        return None
    return _positive(round(float(found.group(1)) * _SCALE[found.group(2).upper()]))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def facts_from_llama(props: dict[str, Any], models: dict[str, Any] | None) -> ServerFacts:
    """llama-server's `/props` (and `/v1/models`, whose ids may hold the file name)."""
    names: list[str] = []
    path = props.get("model_path")
    if isinstance(path, str) and path:
        names.append(_stem(path))
    for key in ("model_alias", "general.name", "model_name"):
        value = props.get(key)
        if isinstance(value, str) and value:
            names.append(value)
    entries = [e for e in (models or {}).get("data") or []
               if isinstance(e, dict) and isinstance(e.get("id"), str)]
    names += [_stem(entry["id"]) for entry in entries]
    params = next((_positive(e["meta"].get("n_params")) for e in entries
                   if isinstance(e.get("meta"), dict)), None)  # meta: null while it loads
    settings = props.get("default_generation_settings") or {}
    # a slot's own window: with --parallel N each request gets n_ctx / N
    window = _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
    family = family_of(template=_text(props.get("chat_template")))
    return ServerFacts("llamacpp", _unique(names), window, params, family)


def facts_from_vllm(models: dict[str, Any], model: str) -> ServerFacts | None:
    """vLLM's `/v1/models`: entries owned by vllm, with `max_model_len` and `root`."""
    entries = [e for e in models.get("data") or [] if isinstance(e, dict)]
    if not any(e.get("owned_by") == "vllm" for e in entries):
        return None
    entry = next((e for e in entries if e.get("id") == model), entries[0] if entries else {})
    names = [str(entry[k]) for k in ("root", "id") if isinstance(entry.get(k), str)]
    window = _positive(entry.get("max_model_len"))
    return ServerFacts("vllm", _unique(_stem(n) for n in names), window)


def facts_from_lmstudio(entry: dict[str, Any]) -> ServerFacts:
    """LM Studio's `/api/v0/models/{model}`: the loaded window, else the largest one."""
    window = _positive(entry.get("loaded_context_length")) or _positive(
        entry.get("max_context_length")
    )
    names = [str(entry[k]) for k in ("id", "arch") if isinstance(entry.get(k), str)]
    family = family_of(architecture=_text(entry.get("arch")))
    return ServerFacts("lmstudio", _unique(names), window, _params_of(entry.get("params_string")),
                       family)


def facts_from_ollama(show: dict[str, Any]) -> ServerFacts:
    """Ollama's `/api/show`: the trained window, the parameter count, the family (by the
    template, else the architecture) and the base model's name."""
    info = show.get("model_info") or {}
    window = params = None
    architecture = None
    names: list[str] = []
    if isinstance(info, dict):
        params = _positive(info.get("general.parameter_count")) or _params_of(
            info.get("general.size_label"))
        architecture = _text(info.get("general.architecture"))
        window = next(
            (_positive(v) for k, v in info.items() if k.endswith(".context_length")), None
        )
        for key in ("general.basename", "general.name", "general.finetune"):
            if isinstance(info.get(key), str):
                names.append(str(info[key]))
        size = info.get("general.size_label")
        if names and isinstance(size, str):
            names.insert(0, f"{names[0]}-{size}")
    details = show.get("details") or {}
    if isinstance(details, dict):
        params = params or _params_of(details.get("parameter_size"))
        architecture = architecture or _text(details.get("family"))
        if isinstance(details.get("family"), str):
            size = details.get("parameter_size")
            names.append(f"{details['family']}-{size}" if isinstance(size, str)
                         else details["family"])
    family = family_of(template=_text(show.get("template")), architecture=architecture)
    return ServerFacts("ollama", _unique(names), window, params, family)


def _unique(names: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for n in names if n))


# -- asking ------------------------------------------------------------------------------------

_CACHE: dict[tuple[str, str], ServerFacts | None] = {}
LOADING = object()  # a 503: the server is loading its model, and may say more later
_PENDING: dict[tuple[str, str], threading.Thread] = {}


def _ask_all(urls: list[str], *, body: dict[str, Any] | None = None) -> list[Any]:
    """The JSON answer of each of `urls` (POSTs of `body` when given), None for any that
    failed. Plain http, the usual case, goes over bare sockets (one short HTTP/1.0 exchange
    each: no client to build, nothing to import); https through httpx."""
    if all(url.startswith("http://") for url in urls):
        return [_plain(url, body) for url in urls]
    import httpx

    with httpx.Client(timeout=PROBE_TIMEOUT, trust_env=False,
                      headers={"User-Agent": "totem"}) as client:
        answers = []
        for url in urls:
            try:
                response = client.post(url, json=body) if body is not None else client.get(url)
                answers.append(response.json() if response.status_code == 200
                               else LOADING if response.status_code == 503 else None)
            except (httpx.HTTPError, ValueError):
                answers.append(None)
        return answers


def _plain(url: str, body: dict[str, Any] | None) -> Any:
    """One HTTP/1.0 exchange with a plain-http server: its JSON answer on a 200, else None."""
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    data = json.dumps(body).encode() if body is not None else b""
    head = (f"{'POST' if body is not None else 'GET'} {path or '/'} HTTP/1.0\r\n"
            f"Host: {parts.netloc}\r\nUser-Agent: totem\r\nAccept: application/json\r\n"
            "Connection: close\r\n"
            + (f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
               if body is not None else "") + "\r\n")
    try:
        with socket.create_connection((parts.hostname or "", parts.port or 80),
                                      timeout=PROBE_TIMEOUT) as sock:
            sock.sendall(head.encode() + data)
            return _read_json(sock)
    except (OSError, ValueError):
        return None


def _read_json(sock: socket.socket) -> Any:
    """The JSON body of a 200 answer, read up to its Content-Length (a server may keep the
    connection open after it); None for another status."""
    answer = b""
    while b"\r\n\r\n" not in answer and len(answer) < _MAX_ANSWER:
        piece = sock.recv(65536)
        if not piece:
            break
        answer += piece
    head, _, content = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = lines[0].split(" ")[1:2]
    if status != ["200"]:
        return LOADING if status == ["503"] else None
    fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    if "chunked" in fields.get("transfer-encoding", "").lower():
        return json.loads(_unchunk(sock, content))
    length = int(fields.get("content-length") or _MAX_ANSWER)
    while len(content) < min(length, _MAX_ANSWER):
        piece = sock.recv(65536)
        if not piece:
            break
        content += piece
    return json.loads(content[:length])


def _unchunk(sock: socket.socket, data: bytes) -> bytes:
    """The body of a chunked answer (some servers send one even to HTTP/1.0)."""
    while not data.endswith(b"0\r\n\r\n") and len(data) < _MAX_ANSWER:
        piece = sock.recv(65536)
        if not piece:
            break
        data += piece
    body = b""
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        body, data = body + data[:size], data[size + 2 :]
    return body


def _root(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base[:-3] if base.endswith("/v1") else base


def _probe_openai(base_url: str, model: str) -> tuple[ServerFacts | None, bool]:
    """(what an OpenAI-compatible server says, whether it was still loading)."""
    base, root = base_url.rstrip("/"), _root(base_url)
    answers = _ask_all(
        [f"{root}/props", f"{base}/models", f"{root}/api/v0/models/{model or '-'}"]
    )
    props, models, entry = answers
    models = models if isinstance(models, dict) else None
    loading = any(answer is LOADING for answer in answers)
    if isinstance(props, dict) and "default_generation_settings" in props:
        return facts_from_llama(props, models), False
    if models is not None:
        found = facts_from_vllm(models, model)
        if found is not None:
            return found, False
    if isinstance(entry, dict) and entry.get("id"):
        return facts_from_lmstudio(entry), False
    return None, loading


def probe(kind: str, base_url: str, model: str) -> ServerFacts | None:
    """What the local server at `base_url` says of `model`; asked once per process (the
    answer of a `probe_soon` still under way is waited for).

    None for a hosted provider (never asked), or a server that says nothing useful; one
    that answered 503 (llama-server while it loads its model) is asked again next time.
    """
    if not is_local(kind, base_url):
        return None
    if not base_url and kind == "ollama":
        base_url = "http://127.0.0.1:11434"
    key = (base_url, model)
    pending = _PENDING.pop(key, None)
    if pending is not None:
        pending.join()
    if key not in _CACHE:
        return _remember(key, *_ask_server(kind, base_url, model))
    return _CACHE[key]


def _remember(
    key: tuple[str, str], facts: ServerFacts | None, loading: bool
) -> ServerFacts | None:
    """Keep what the server said, unless it was still loading its model."""
    if facts is not None or not loading:
        _CACHE[key] = facts
    return facts


def probe_soon(kind: str, base_url: str, model: str) -> None:
    """Start asking the local server now, in a thread, so that the round trip overlaps
    whatever comes before `probe` (building the prompt and tools); nothing for a hosted one."""
    if not base_url and kind == "ollama":
        base_url = "http://127.0.0.1:11434"
    key = (base_url, model)
    if not is_local(kind, base_url) or key in _CACHE or key in _PENDING:
        return

    def ask() -> None:
        _remember(key, *_ask_server(kind, base_url, model))

    thread = threading.Thread(target=ask, name="totem-probe", daemon=True)
    _PENDING[key] = thread
    thread.start()


def _ask_server(kind: str, base_url: str, model: str) -> tuple[ServerFacts | None, bool]:
    """(what the server says, whether it was still loading)."""
    if kind == "ollama":
        show = _ask_all([f"{_root(base_url)}/api/show"], body={"model": model})[0]
        return (facts_from_ollama(show) if isinstance(show, dict) else None), show is LOADING
    if kind in _OPENAI_KINDS:
        return _probe_openai(base_url, model)
    return None, False
