"""Anthropic Messages over httpx (SPEC P3, P11, P12): the provider half of the adapter.

The mapping lives in `anthropic_wire.py` (pure functions, re-exported here); this module
adds the HTTP: POST {base_url}/v1/messages with `x-api-key` and `anthropic-version`, the
event stream read with the shared SSE decoder, GET /v1/models with paging, and every failure
turned into the errors of `base.py` by the shared helpers of `retry.py`. It never retries.
The official SDK is not imported: it costs over a second at start-up.

The API key is sent only as `x-api-key` and appears in no message and no repr.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

import httpx

from totem.providers.anthropic_wire import (
    ABORTED_OUTPUT,
    MessagesStreamState,
    cache_markers,
    finish,
    from_sse,
    from_wire,
    to_wire,
)
from totem.providers.base import (
    InvalidRequest,
    ModelRequest,
    ProviderError,
    RetryableError,
    StreamEvent,
)
from totem.providers.retry import classify_status, error_message, parse_retry_after
from totem.providers.sse import aiter_sse

if TYPE_CHECKING:
    from totem.config import ProviderConfig

__all__ = [
    "ABORTED_OUTPUT",
    "API_VERSION",
    "DEFAULT_BASE_URL",
    "AnthropicProvider",
    "MessagesStreamState",
    "cache_markers",
    "finish",
    "from_config",
    "from_sse",
    "from_wire",
    "to_wire",
]

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
KEY_ENV = "ANTHROPIC_API_KEY"
MAX_MODEL_PAGES = 50


class AnthropicProvider:
    """A configured Anthropic endpoint: base URL (without /v1), key, headers, options."""

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
        self.base_url = base[:-3] if base.endswith("/v1") else base
        self.headers = dict(headers or {})
        self.options = {k: v for k, v in (options or {}).items() if k != "headers"}
        self.timeout = float(timeout or self.options.get("timeout") or 300.0)
        self._api_key = api_key or None
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"AnthropicProvider(name={self.name!r}, base_url={self.base_url!r}, key={key})"

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout, connect=10.0, write=30.0),
                limits=httpx.Limits(max_keepalive_connections=8, keepalive_expiry=60.0),
                transport=self._transport,
                verify=not self.base_url.startswith("http://"),  # no CA bundle for plain http
            )
        return self._client

    def _headers(self) -> dict[str, str]:
        headers = {"User-Agent": "totem", "anthropic-version": API_VERSION, **self.headers}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def _network_error(self, exc: Exception) -> ProviderError:
        detail = str(exc) or type(exc).__name__
        if isinstance(exc, httpx.UnsupportedProtocol):
            return InvalidRequest(self._redact(f"invalid base URL {self.base_url!r}: {detail}"))
        if isinstance(exc, httpx.ConnectError):
            detail = f"cannot connect to {self.base_url} ({detail})"
        elif isinstance(exc, httpx.TimeoutException):
            detail = f"{type(exc).__name__}: no answer from {self.base_url} in time"
        return RetryableError(self._redact(f"network: {detail}"))

    def _http_error(self, response: httpx.Response, body: bytes) -> ProviderError:
        message = error_message(body, response.reason_phrase or "error")
        status = response.status_code
        hint = f" (check the key of provider {self.name})" if self._api_key else (
            f" (provider {self.name} has no key: set {KEY_ENV} or its key in the config)")
        if status == 404:
            message += f" ({response.request.method} {response.request.url})"
        return classify_status(
            status,
            self._redact(f"HTTP {status}: {message}"),
            retry_after=parse_retry_after(response.headers),
            key_hint=hint,
        )

    def _scrub(self, exc: ProviderError) -> ProviderError:
        """A server may echo the key in its own words: never let it through."""
        if self._api_key and self._api_key in exc.message:
            exc.message = self._redact(exc.message)
            exc.args = (exc.message,)
        return exc

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        body = to_wire(request, options=self.options, provider=self.name)
        content = json.dumps(body, ensure_ascii=False).encode()
        headers = {**self._headers(), "Content-Type": "application/json"}
        try:
            async with self._http().stream(
                "POST", f"{self.base_url}/v1/messages", content=content, headers=headers
            ) as response:
                if response.status_code >= 400:
                    raise self._http_error(response, await response.aread())
                ctype = response.headers.get("content-type", "")
                if "json" in ctype and "event-stream" not in ctype:
                    for event in _whole_answer(await response.aread()):
                        yield event
                    return
                async for event in _read_stream(response):
                    yield event
        except httpx.RequestError as exc:
            raise self._network_error(exc) from None
        except httpx.InvalidURL as exc:
            raise InvalidRequest(self._redact(f"invalid base URL: {exc}")) from None
        except ProviderError as exc:
            raise self._scrub(exc) from None

    async def list_models(self) -> list[str]:
        """The model ids of GET {base_url}/v1/models, every page of them."""
        ids: list[str] = []
        after: str | None = None
        for _ in range(MAX_MODEL_PAGES):
            params = {"limit": "1000", **({"after_id": after} if after else {})}
            try:
                response = await self._http().get(
                    f"{self.base_url}/v1/models", params=params, headers=self._headers()
                )
            except httpx.RequestError as exc:
                raise self._network_error(exc) from None
            if response.status_code >= 400:
                raise self._scrub(self._http_error(response, response.content))
            try:
                page = response.json()
                data = page.get("data") or []
            except (ValueError, AttributeError):
                raise RetryableError("malformed model list from the server") from None
            ids += [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]
            last = page.get("last_id") or (ids[-1] if ids else None)
            if not page.get("has_more") or not last or last == after:
                break
            after = str(last)
        return ids

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()


def from_config(cfg: ProviderConfig, key: str | None) -> AnthropicProvider:
    """The provider for a configuration entry; the key falls back to ANTHROPIC_API_KEY."""
    import os

    headers = cfg.options.get("headers") or {}
    return AnthropicProvider(
        cfg.name,
        cfg.base_url or DEFAULT_BASE_URL,
        api_key=key or os.environ.get(KEY_ENV) or None,
        headers={str(k): str(v) for k, v in headers.items()},
        options=cfg.options,
    )


def _whole_answer(body: bytes) -> list[StreamEvent]:
    """A server that answered with one Message document instead of a stream."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if not isinstance(data, dict) or data.get("type") not in ("message", "error"):
        snippet = body[:80].decode("utf-8", "replace")
        raise RetryableError(f"malformed response: expected an event stream, got {snippet!r}")
    state = MessagesStreamState()
    if data["type"] == "error":
        from_wire("error", data, state)
    events = from_wire("message_start", {"type": "message_start", "message": data}, state)
    for index, block in enumerate(data.get("content") or []):
        start = {"type": "content_block_start", "index": index, "content_block": block}
        events += from_wire("content_block_start", start, state)
        events += from_wire("content_block_stop", {"type": "content_block_stop",
                                                   "index": index}, state)
    delta = {"type": "message_delta", "delta": {"stop_reason": data.get("stop_reason")}}
    events += from_wire("message_delta", delta, state)
    return events + finish(state)


async def _read_stream(response: httpx.Response) -> AsyncIterator[StreamEvent]:
    state = MessagesStreamState()
    async for event in aiter_sse(response.aiter_bytes()):
        for item in from_sse(event.event, event.data, state):
            yield item
    for item in finish(state):
        yield item
