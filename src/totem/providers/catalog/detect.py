"""Finding local model servers: probe their usual ports on this computer.

    found = await detect()                      # or detect_sync()
    found = await detect(ports={"ollama": 54321})   # tests: servers on free ports

Every port is probed at the same time, with a short connect timeout, so a computer with
nothing running answers in a few milliseconds and one with a hung server in about a second.
A server is recognised by what it answers, not only by its port:

    llama.cpp     GET /props           {"default_generation_settings": ...}
    Ollama        GET /api/tags        {"models": [...]}   (llama.cpp answers it too)
    LiteLLM       GET /health/liveliness   "I'm alive!" (open even with a master key)
    vLLM          GET /v1/models       entries owned_by "vllm"
    other         GET /v1/models       an OpenAI-compatible list: named after the port

A 401 or 403, or a 400 / 500 whose body speaks of a key or authentication, is reported as
needing a key; so is any refusal by a LiteLLM proxy (without a database it answers a
missing key with a bare 500 and a wrong one with 400 "No connected db."). The ports come
from the templates marked `detect` (templates.json).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from totem.providers.catalog.templates import Template, template, templates

__all__ = ["Found", "default_ports", "detect", "detect_sync"]

_AUTH_WORDS = re.compile(r"auth|api[ _-]?key|unauthori[sz]ed|credential|bearer", re.I)


@dataclass(frozen=True, slots=True)
class Found:
    name: str  # the template id: ollama, lmstudio, llamacpp, vllm, litellm
    kind: str
    base_url: str
    models: list[str] = field(default_factory=list)
    needs_key: bool = False
    note: str = ""


@dataclass(slots=True)
class _Answer:
    status: int
    body: Any  # parsed JSON, or the text
    headers: httpx.Headers

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def needs_key(self) -> bool:
        if self.status in (401, 403):
            return True
        return self.status in (400, 500) and bool(_AUTH_WORDS.search(str(self.body)[:2000]))


def default_ports() -> dict[str, int]:
    """Template id -> port, for the templates marked `detect`."""
    return {t.id: t.port for t in templates() if t.detect and t.port}


async def detect(
    *,
    host: str = "127.0.0.1",
    ports: Mapping[str, int] | None = None,
    connect_timeout: float = 0.3,
    timeout: float = 1.0,
) -> list[Found]:
    """The servers that answer on `ports` (template id -> port; the usual ones by default),
    in the order of `ports`."""
    wanted = dict(ports) if ports is not None else default_ports()
    limits = httpx.Timeout(timeout, connect=connect_timeout)
    async with httpx.AsyncClient(timeout=limits, trust_env=False) as client:
        probes = [_bounded(_probe(client, host, port, name), timeout)
                  for name, port in wanted.items()]
        results = await asyncio.gather(*probes)
    return [found for found in results if found is not None]


def detect_sync(**options: Any) -> list[Found]:
    """`detect(**options)` from synchronous code."""
    return asyncio.run(detect(**options))


async def _bounded(probe: Any, seconds: float) -> Found | None:
    try:
        result: Found | None = await asyncio.wait_for(probe, seconds + 0.2)
        return result
    except TimeoutError:
        return None


async def _get(client: httpx.AsyncClient, url: str) -> _Answer | None:
    try:
        response = await client.get(url, headers={"User-Agent": "totem"})
    except (httpx.HTTPError, OSError):
        return None
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text[:2000]
    return _Answer(response.status_code, body, response.headers)


async def _probe(client: httpx.AsyncClient, host: str, port: int, name: str) -> Found | None:
    root = f"http://{host}:{port}"
    models, tags, props, alive = await asyncio.gather(
        _get(client, f"{root}/v1/models"),
        _get(client, f"{root}/api/tags"),
        _get(client, f"{root}/props"),
        _get(client, f"{root}/health/liveliness"),
    )
    # llama.cpp answers /api/tags too (Ollama compatibility): /props first.
    if props is not None and isinstance(props.body, dict) and (
        "default_generation_settings" in props.body or "total_slots" in props.body
    ):
        return _from_models("llamacpp", host, port, models, "llama.cpp server")
    if tags is not None and tags.ok and isinstance(tags.body, dict) and "models" in tags.body:
        names = [str(m.get("name") or m.get("model")) for m in tags.body["models"]
                 if isinstance(m, dict)]
        return _found("ollama", host, port, names, note=f"Ollama, {_count(names)}")
    if models is None:  # nothing listens, it does not speak HTTP, or it is too slow
        if alive is not None and alive.ok and "alive" in str(alive.body).lower():
            return _from_models("litellm", host, port, None, "LiteLLM proxy")
        return None
    if _is_litellm(models, alive):
        # Without a database the proxy answers a missing key with a bare 500 and a wrong
        # one with 400 "No connected db.": any refusal of /v1/models means "give a key".
        refused = not models.ok and models.status in (400, 401, 403, 500)
        return _from_models("litellm", host, port, models, "LiteLLM proxy", refused=refused)
    return _openai_like(name, host, port, models)


def _openai_like(name: str, host: str, port: int, models: _Answer) -> Found | None:
    owners = {str(m.get("owned_by")) for m in _entries(models)}
    if "vllm" in owners:
        return _from_models("vllm", host, port, models, "vLLM")
    if "llamacpp" in owners:
        return _from_models("llamacpp", host, port, models, "llama.cpp server")
    what = f"a server on the usual port of {_label(name)}"
    if models.ok and isinstance(models.body, dict) and isinstance(models.body.get("data"), list):
        return _from_models(name, host, port, models, f"an OpenAI-compatible {what[2:]}")
    if models.needs_key():
        return _from_models(name, host, port, models, what)
    return None  # something else listens there (a web app, ...): not a model server


def _is_litellm(models: _Answer, alive: _Answer | None) -> bool:
    if any(h.lower().startswith("x-litellm") for h in models.headers):
        return True
    if alive is not None and alive.ok and "alive" in str(alive.body).lower():
        return True
    return "litellm" in str(models.body).lower()


def _entries(answer: _Answer) -> list[dict[str, Any]]:
    if not answer.ok or not isinstance(answer.body, dict):
        return []
    return [m for m in answer.body.get("data") or [] if isinstance(m, dict)]


def _from_models(
    name: str, host: str, port: int, models: _Answer | None, what: str, *,
    refused: bool = False,
) -> Found:
    if models is None:
        return _found(name, host, port, [], note=f"{what}; it did not list its models in time")
    if refused or models.needs_key():
        return _found(name, host, port, [], needs_key=True,
                      note=f"{what}; it wants a key (HTTP {models.status})")
    ids = [str(m["id"]) for m in _entries(models) if "id" in m]
    return _found(name, host, port, ids, note=f"{what}, {_count(ids)}")


def _found(name: str, host: str, port: int, models: list[str], *, needs_key: bool = False,
           note: str = "") -> Found:
    kind, path = name, ""
    known = _template(name)
    if known is not None:
        kind, path = known.kind, urlsplit(known.base_url).path
    return Found(name=name, kind=kind, base_url=f"http://{host}:{port}{path}", models=models,
                 needs_key=needs_key, note=note)


def _template(name: str) -> Template | None:
    try:
        return template(name)
    except KeyError:
        return None


def _label(name: str) -> str:
    known = _template(name)
    return known.label if known is not None else name


def _count(models: list[str]) -> str:
    return "1 model" if len(models) == 1 else f"{len(models)} models"
