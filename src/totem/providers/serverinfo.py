"""What a local model server says of the model it serves: engine, model file, real window.

A served name says little (llama-server `--alias local`, LM Studio, gateways), so for a
local provider totem asks the server once per process and base URL + model:

    llama.cpp   GET {root}/props            model_path, default_generation_settings.n_ctx
                GET {base}/models           data[].meta (n_ctx_train), id (the alias)
    vLLM        GET {base}/models           data[].owned_by "vllm", max_model_len, root
    LM Studio   GET {root}/api/v0/models/M  loaded_context_length, max_context_length, arch
    Ollama      POST {root}/api/show        model_info *.context_length, details.family

Only local providers are asked (a loopback or private address, or Ollama at its default
one): a hosted provider pays nothing. The questions go at the same time, each with a short
timeout, so a local server costs one round trip; one that answers none gives `None`.
"""

from __future__ import annotations

import ipaddress
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit

__all__ = [
    "Engine",
    "ServerFacts",
    "facts_from_llama",
    "facts_from_lmstudio",
    "facts_from_ollama",
    "facts_from_vllm",
    "is_local",
    "probe",
]

Engine: TypeAlias = Literal["llamacpp", "vllm", "lmstudio", "ollama"]
PROBE_TIMEOUT = 2.0
_OPENAI_KINDS = frozenset({"openai", "openai-compatible", "llamacpp", "lmstudio", "vllm", "other"})


# private networks (RFC 1918, IPv6 unique local); `is_private` would add documentation ranges
_LOCAL_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"))


@dataclass(frozen=True, slots=True)
class ServerFacts:
    """What the server said: its engine, names of the model it serves, its window in tokens."""

    engine: Engine
    names: tuple[str, ...] = ()  # model file stem, GGUF general.name, architecture ...
    context_window: int | None = None


def is_local(kind: str, base_url: str) -> bool:
    """A server on this computer or the local network."""
    if kind == "ollama" and not base_url:
        return True  # its default address is this computer
    host = (urlsplit(base_url).hostname or "").lower()
    if host in ("localhost", "") or host.endswith(".local"):
        return bool(host)
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_link_local or any(
        address in network for network in _LOCAL_NETWORKS
    )


def _stem(path: str) -> str:
    """`/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf` -> `qwen2.5-coder-1.5b-instruct-q4_k_m`."""
    name = PureWindowsPath(path).name if "\\" in path else PurePosixPath(path).name
    return name[:-5] if name.lower().endswith(".gguf") else name


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


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
    for entry in (models or {}).get("data") or []:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            names.append(_stem(entry["id"]))
    settings = props.get("default_generation_settings") or {}
    # a slot's own window: with --parallel N each request gets n_ctx / N
    window = _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return ServerFacts("llamacpp", _unique(names), window)


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
    return ServerFacts("lmstudio", _unique(names), window)


def facts_from_ollama(show: dict[str, Any]) -> ServerFacts:
    """Ollama's `/api/show`: the trained window, the family and the base model's name."""
    info = show.get("model_info") or {}
    window = None
    names: list[str] = []
    if isinstance(info, dict):
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
    if isinstance(details, dict) and isinstance(details.get("family"), str):
        size = details.get("parameter_size")
        names.append(f"{details['family']}-{size}" if isinstance(size, str) else details["family"])
    return ServerFacts("ollama", _unique(names), window)


def _unique(names: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for n in names if n))


# -- asking ------------------------------------------------------------------------------------

_CACHE: dict[tuple[str, str], ServerFacts] = {}


def _ask_all(urls: list[str], *, body: dict[str, Any] | None = None) -> list[Any]:
    """The JSON answer of each of `urls` (POSTs of `body` when given), asked at the same
    time; None for any that failed. httpx is already loaded by the provider by then."""
    import httpx

    def one(client: httpx.Client, url: str) -> Any:
        try:
            if body is not None:
                response = client.post(url, json=body)
            else:
                response = client.get(url)
            return response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None

    with httpx.Client(timeout=PROBE_TIMEOUT, verify=False, trust_env=False,
                      headers={"User-Agent": "totem"}) as client:
        if len(urls) == 1:
            return [one(client, urls[0])]
        with ThreadPoolExecutor(len(urls)) as pool:
            return list(pool.map(lambda url: one(client, url), urls))


def _root(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base[:-3] if base.endswith("/v1") else base


def _probe_openai(base_url: str, model: str) -> ServerFacts | None:
    base, root = base_url.rstrip("/"), _root(base_url)
    props, models, entry = _ask_all(
        [f"{root}/props", f"{base}/models", f"{root}/api/v0/models/{model or '-'}"]
    )
    models = models if isinstance(models, dict) else None
    if isinstance(props, dict) and "default_generation_settings" in props:
        return facts_from_llama(props, models)
    if models is not None:
        found = facts_from_vllm(models, model)
        if found is not None:
            return found
    if isinstance(entry, dict) and entry.get("id"):
        return facts_from_lmstudio(entry)
    return None


def probe(kind: str, base_url: str, model: str) -> ServerFacts | None:
    """What the local server at `base_url` says of `model`; asked once per process.

    None for a hosted provider (never asked), or a server that says nothing useful (asked
    again next time: llama-server answers 503 while it loads its model).
    """
    if not is_local(kind, base_url):
        return None
    if not base_url and kind == "ollama":
        base_url = "http://127.0.0.1:11434"
    key = (base_url, model)
    if key not in _CACHE:
        facts: ServerFacts | None = None
        if kind == "ollama":
            show = _ask_all([f"{_root(base_url)}/api/show"], body={"model": model})[0]
            facts = facts_from_ollama(show) if isinstance(show, dict) else None
        elif kind in _OPENAI_KINDS:
            facts = _probe_openai(base_url, model)
        if facts is None:
            return None
        _CACHE[key] = facts
    return _CACHE[key]
