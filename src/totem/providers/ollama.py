"""Ollama's native API: the adapter.

`OllamaProvider.stream` posts `ollama_wire.to_wire(...)` to `{base_url}/api/chat` and reads
the NDJSON answer line by line. Before the first request for a model it asks `/api/show`
once for the model's context length (cached on the provider) so that `num_ctx` never goes
past it; the last `num_ctx` sent for a model is kept too, so the window only grows and
Ollama does not reload the model at every step. `list_models()` reads `/api/tags` and
`/api/show` of each model: capabilities (completion, tools, thinking, vision ...) and
context length; what Ollama does not say stays None. A key, when set (Ollama behind an
authenticating proxy, Ollama cloud), goes as a Bearer token. The adapter never retries.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Unpack

import httpx

from totem.providers.base import ModelRequest, ProviderError, StreamEvent
from totem.providers.transport.http import (
    HttpOptions,
    HttpProvider,
    json_body,
    json_object,
    json_stream,
)
from totem.providers.transport.retry import error_message
from totem.providers.wire.ollama import (
    OllamaStreamState,
    estimate_num_ctx,
    finish,
    from_wire,
    to_wire,
)

if TYPE_CHECKING:
    from totem.settings.config import ProviderConfig

__all__ = ["DEFAULT_BASE_URL", "OllamaModel", "OllamaProvider", "OllamaShow",
           "estimate_num_ctx", "finish", "from_config", "from_wire", "to_wire"]

DEFAULT_BASE_URL = "http://127.0.0.1:11434"
SHOW_CONCURRENCY = 4


@dataclass(frozen=True, slots=True)
class OllamaShow:
    """What /api/show says of a model; None where it says nothing."""

    context_length: int | None = None
    capabilities: tuple[str, ...] | None = None
    family: str = ""
    parameter_size: str = ""
    quantization: str = ""


@dataclass(frozen=True, slots=True)
class OllamaModel:
    """One installed model (from /api/tags and /api/show)."""

    id: str
    size: int | None = None
    family: str = ""
    parameter_size: str = ""
    quantization: str = ""
    context_length: int | None = None
    capabilities: tuple[str, ...] | None = None  # None: this Ollama does not say

    def _can(self, capability: str) -> bool | None:
        return None if self.capabilities is None else capability in self.capabilities

    @property
    def tools(self) -> bool | None:
        return self._can("tools")

    @property
    def thinking(self) -> bool | None:
        return self._can("thinking")

    @property
    def vision(self) -> bool | None:
        return self._can("vision")

    @property
    def completion(self) -> bool | None:
        return self._can("completion")


class OllamaProvider(HttpProvider):
    """A configured Ollama server: base URL, optional key, headers, options."""

    default_base_url = DEFAULT_BASE_URL
    default_timeout = 600.0  # a local model may think for minutes before its first token
    connect_hint = "; is Ollama running?"

    def __init__(
        self, name: str, base_url: str = DEFAULT_BASE_URL, **kwargs: Unpack[HttpOptions]
    ) -> None:
        super().__init__(name, base_url, **kwargs)
        self._shown: dict[str, OllamaShow | None] = {}
        self._show_lock = asyncio.Lock()
        self._num_ctx: dict[str, int] = {}  # the last window sent, per model

    def _root(self, base_url: str) -> str:
        return super()._root(base_url).removesuffix("/v1").removesuffix("/api")

    def _missed(self, request: httpx.Request) -> str:
        return f" ({request.method} {request.url.path})"

    def _http_error(self, response: httpx.Response, body: bytes, model: str = "") -> ProviderError:
        message = error_message(body, response.reason_phrase or "error")
        if response.status_code == 404 and model and "not found" in message:
            return self._status_error(response, f"{message} (pull it with: ollama pull {model})")
        return super()._http_error(response, body)

    # chat -------------------------------------------------------------------------------------

    async def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The /api/chat body, `num_ctx` sized for this request and this model."""
        opts = {**self.options, **request.options}
        auto = opts.get("num_ctx") in (None, "auto")
        limit: int | None = None
        if auto:
            shown = await self.show(request.model)
            limit = shown.context_length if shown else None
        body = to_wire(request, options=self.options, context_limit=limit,
                       floor=self._num_ctx.get(request.model))
        if auto:
            self._num_ctx[request.model] = int(body["options"]["num_ctx"])
        return body

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        body = json_body(await self.request_body(request))
        error = functools.partial(self._http_error, model=request.model)
        async with self._post_stream(f"{self.base_url}/api/chat", body, on_error=error) as response:
            # NDJSON: one JSON object a line (a whole JSON answer is one line too)
            lines = response.aiter_lines()
            async for event in json_stream(lines, OllamaStreamState(), from_wire, finish):
                yield event

    # models -----------------------------------------------------------------------------------

    async def show(self, model: str) -> OllamaShow | None:
        """/api/show of `model`, asked once and cached; None when the server cannot say
        (an older Ollama or a simulator without the endpoint). A network failure is not
        cached: the next request asks again."""
        if model in self._shown:
            return self._shown[model]
        async with self._show_lock:
            if model not in self._shown:
                try:
                    response = await self._http().post(
                        f"{self.base_url}/api/show", json={"model": model},
                        headers=self._headers())
                except httpx.HTTPError:
                    return None
                self._shown[model] = _show(response)
        return self._shown[model]

    async def list_models(self) -> list[OllamaModel]:
        """The installed models (/api/tags), each with what /api/show says of it."""
        response = await self._get(f"{self.base_url}/api/tags")
        tags = json_object(response, "model list from /api/tags").get("models") or []
        tags = [t for t in tags if isinstance(t, dict) and (t.get("model") or t.get("name"))]
        gate = asyncio.Semaphore(SHOW_CONCURRENCY)

        async def one(tag: dict[str, Any]) -> OllamaModel:
            name = str(tag.get("model") or tag.get("name"))
            async with gate:
                shown = await self.show(name) or OllamaShow()
            details = _dict(tag.get("details"))
            return OllamaModel(
                id=name,
                size=tag["size"] if isinstance(tag.get("size"), int) else None,
                family=shown.family or str(details.get("family") or ""),
                parameter_size=shown.parameter_size or str(details.get("parameter_size") or ""),
                quantization=shown.quantization or str(details.get("quantization_level") or ""),
                context_length=shown.context_length,
                capabilities=shown.capabilities,
            )

        return list(await asyncio.gather(*(one(t) for t in tags)))


def from_config(cfg: ProviderConfig, key: str | None = None) -> OllamaProvider:
    """A provider from configuration (base URL default http://127.0.0.1:11434)."""
    return OllamaProvider.from_config(cfg, key)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _show(response: httpx.Response) -> OllamaShow | None:
    if response.status_code >= 400:
        return None
    try:
        data = response.json()
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    info = _dict(data.get("model_info"))
    arch = info.get("general.architecture")
    length = info.get(f"{arch}.context_length") if isinstance(arch, str) else None
    if not isinstance(length, int):
        length = next((v for k, v in info.items()
                       if k.endswith(".context_length") and isinstance(v, int)), None)
    capabilities = data.get("capabilities")
    details = _dict(data.get("details"))
    return OllamaShow(
        context_length=length if isinstance(length, int) and length > 0 else None,
        capabilities=tuple(str(c) for c in capabilities) if isinstance(capabilities, list)
        else None,
        family=str(details.get("family") or ""),
        parameter_size=str(details.get("parameter_size") or ""),
        quantization=str(details.get("quantization_level") or ""),
    )
