"""Ollama's native API: the adapter (SPEC P2).

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
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from totem.providers.base import (
    InvalidRequest,
    ModelRequest,
    ProviderError,
    RetryableError,
    StreamEvent,
)
from totem.providers.ollama_wire import (
    OllamaStreamState,
    estimate_num_ctx,
    finish,
    from_wire,
    to_wire,
)
from totem.providers.retry import classify_status, error_message, parse_retry_after

if TYPE_CHECKING:
    from totem.config import ProviderConfig

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


class OllamaProvider:
    """A configured Ollama server: base URL, optional key, headers, options."""

    def __init__(
        self,
        name: str,
        base_url: str = DEFAULT_BASE_URL,
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        options: Mapping[str, Any] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = name
        base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.base_url = base.removesuffix("/v1").removesuffix("/api")
        self.headers = dict(headers or {})
        self.options = {k: v for k, v in (options or {}).items() if k != "headers"}
        self.timeout = float(timeout or self.options.get("timeout") or 600.0)
        self._api_key = api_key or None
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._shown: dict[str, OllamaShow | None] = {}
        self._show_lock = asyncio.Lock()
        self._num_ctx: dict[str, int] = {}  # the last window sent, per model

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"OllamaProvider(name={self.name!r}, base_url={self.base_url!r}, key={key})"

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                # A local model may think for minutes before its first token.
                timeout=httpx.Timeout(self.timeout, connect=10.0, write=30.0),
                limits=httpx.Limits(max_keepalive_connections=8, keepalive_expiry=60.0),
                transport=self._transport,
                verify=not self.base_url.startswith("http://"),
            )
        return self._client

    def _headers(self) -> dict[str, str]:
        headers = {"User-Agent": "totem", **self.headers}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def _network_error(self, exc: Exception) -> ProviderError:
        detail = str(exc) or type(exc).__name__
        if isinstance(exc, httpx.UnsupportedProtocol):
            return InvalidRequest(self._redact(f"invalid base URL {self.base_url!r}: {detail}"))
        if isinstance(exc, httpx.ConnectError):
            detail = f"cannot connect to {self.base_url} ({detail}); is Ollama running?"
        elif isinstance(exc, httpx.TimeoutException):
            detail = f"{type(exc).__name__}: no answer from {self.base_url} in time"
        return RetryableError(self._redact(f"network: {detail}"))

    def _http_error(self, response: httpx.Response, body: bytes, model: str = "") -> ProviderError:
        message = error_message(body, response.reason_phrase or "error")
        status = response.status_code
        if status == 404 and model and "not found" in message:
            message += f" (pull it with: ollama pull {model})"
        elif status == 404:
            message += f" ({response.request.method} {response.request.url.path})"
        hint = f" (check the key of provider {self.name})" if self._api_key else (
            f" (provider {self.name} has no key set)")
        return classify_status(
            status,
            self._redact(f"HTTP {status}: {message}"),
            retry_after=parse_retry_after(response.headers),
            key_hint=hint,
        )

    def _scrubbed(self, exc: ProviderError) -> ProviderError:
        if self._api_key and self._api_key in exc.message:
            exc.message = self._redact(exc.message)
            exc.args = (exc.message,)
        return exc

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
        body = json.dumps(await self.request_body(request), ensure_ascii=False)
        headers = {**self._headers(), "Content-Type": "application/json"}
        try:
            async with self._http().stream(
                "POST", f"{self.base_url}/api/chat", content=body.encode(), headers=headers
            ) as response:
                if response.status_code >= 400:
                    raise self._http_error(response, await response.aread(), request.model)
                async for event in _read_stream(response):
                    yield event
        except httpx.RequestError as exc:
            raise self._network_error(exc) from None
        except httpx.InvalidURL as exc:
            raise InvalidRequest(self._redact(f"invalid base URL: {exc}")) from None
        except ProviderError as exc:
            raise self._scrubbed(exc) from None

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
        try:
            response = await self._http().get(f"{self.base_url}/api/tags",
                                              headers=self._headers())
        except httpx.RequestError as exc:
            raise self._network_error(exc) from None
        if response.status_code >= 400:
            raise self._scrubbed(self._http_error(response, response.content))
        try:
            tags = response.json().get("models") or []
        except (ValueError, AttributeError):
            raise RetryableError("malformed model list from /api/tags") from None
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

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()


def from_config(cfg: ProviderConfig, key: str | None = None) -> OllamaProvider:
    """A provider from configuration (base URL default http://127.0.0.1:11434)."""
    headers = cfg.options.get("headers") or {}
    return OllamaProvider(
        cfg.name,
        cfg.base_url or DEFAULT_BASE_URL,
        api_key=key,
        headers={str(k): str(v) for k, v in headers.items()},
        options=cfg.options,
    )


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


async def _read_stream(response: httpx.Response) -> AsyncIterator[StreamEvent]:
    """NDJSON: one JSON object a line (a whole JSON answer is one line too)."""
    state = OllamaStreamState()
    async for line in response.aiter_lines():
        line = line.strip()
        if not line:
            continue
        try:
            chunk = json.loads(line)
        except ValueError:
            chunk = None
        if not isinstance(chunk, dict):
            state.malformed.append(line)
            continue
        for item in from_wire(chunk, state):
            yield item
    for item in finish(state):
        yield item
