"""Gemini (Google AI Studio, `generativelanguage.googleapis.com`): the adapter (SPEC P4).

`GeminiProvider.stream` posts `gemini_wire.to_wire(...)` to
`{base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse` with the key in the
`x-goog-api-key` header (never in the URL, so it cannot leak into an error or a log), reads
the SSE stream with `sse.py`, and maps it back with `gemini_wire.from_wire` / `finish`.
`list_models()` pages through GET `/v1beta/models`. Failures become the errors of `base.py`
through the shared helpers of `retry.py`; Gemini's own shape is read on top: `error.status`
("RESOURCE_EXHAUSTED" ...), a `RetryInfo.retryDelay` when no Retry-After header came, and a
400 whose reason is API_KEY_INVALID, which is an `AuthError`. The adapter never retries.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from totem.providers.base import (
    AuthError,
    InvalidRequest,
    ModelRequest,
    ProviderError,
    RetryableError,
    StreamEvent,
)
from totem.providers.gemini_wire import GeminiStreamState, finish, from_wire, to_wire
from totem.providers.retry import classify_status, error_message, parse_retry_after
from totem.providers.sse import aiter_sse

if TYPE_CHECKING:
    from totem.config import ProviderConfig

__all__ = ["DEFAULT_BASE_URL", "GeminiModel", "GeminiProvider", "finish", "from_config",
           "from_wire", "to_wire"]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
PAGE_SIZE = 1000
MAX_PAGES = 50


@dataclass(frozen=True, slots=True)
class GeminiModel:
    """One entry of the model list; unknown values stay None."""

    id: str  # without the "models/" prefix
    display_name: str = ""
    description: str = ""
    input_token_limit: int | None = None
    output_token_limit: int | None = None
    thinking: bool | None = None
    methods: tuple[str, ...] = ()  # supportedGenerationMethods

    @property
    def chat(self) -> bool:
        """Whether it answers `generateContent` (embedding and image models do not)."""
        return "generateContent" in self.methods


class GeminiProvider:
    """A configured Gemini endpoint: base URL, key, extra headers, options."""

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
        self.options = {k: v for k, v in (options or {}).items() if k != "headers"}
        version = str(self.options.get("api_version") or "v1beta")
        base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.base_url = base.removesuffix(f"/{version}")
        self.api_root = f"{self.base_url}/{version}"
        self.headers = dict(headers or {})
        self.timeout = float(timeout or self.options.get("timeout") or 300.0)
        self._api_key = api_key or None
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"GeminiProvider(name={self.name!r}, base_url={self.base_url!r}, key={key})"

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout, connect=10.0, write=30.0),
                limits=httpx.Limits(max_keepalive_connections=8, keepalive_expiry=60.0),
                transport=self._transport,
                verify=not self.base_url.startswith("http://"),
            )
        return self._client

    def _headers(self) -> dict[str, str]:
        headers = {"User-Agent": "totem", **self.headers}
        if self._api_key:
            headers["x-goog-api-key"] = self._api_key
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
        status = response.status_code
        detail = _ErrorDetail.parse(body, response.reason_phrase or "error")
        message = f"HTTP {status}{f' {detail.status}' if detail.status else ''}: {detail.message}"
        if status == 404:
            message += f" ({response.request.method} {response.request.url.path})"
        hint = f" (check the key of provider {self.name})" if self._api_key else (
            f" (provider {self.name} has no key set)")
        if detail.key_invalid:
            return AuthError(self._redact(message + hint), status=status)
        retry_after = parse_retry_after(response.headers)
        return classify_status(
            status,
            self._redact(message),
            retry_after=retry_after if retry_after is not None else detail.retry_delay,
            key_hint=hint,
        )

    def _scrubbed(self, exc: ProviderError) -> ProviderError:
        if self._api_key and self._api_key in exc.message:
            exc.message = self._redact(exc.message)
            exc.args = (exc.message,)
        return exc

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        body = json.dumps(to_wire(request, options=self.options, provider=self.name),
                          ensure_ascii=False)
        model = request.model.removeprefix("models/")
        url = f"{self.api_root}/models/{model}:streamGenerateContent?alt=sse"
        headers = {**self._headers(), "Content-Type": "application/json"}
        try:
            async with self._http().stream(
                "POST", url, content=body.encode(), headers=headers
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
            raise self._scrubbed(exc) from None

    async def list_models(self, *, chat_only: bool = True) -> list[GeminiModel]:
        """Every model of GET /v1beta/models, page after page (`nextPageToken`).

        With `chat_only`, only those that answer `generateContent`.
        """
        models: list[GeminiModel] = []
        token: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            params = {"pageSize": str(PAGE_SIZE), **({"pageToken": token} if token else {})}
            page = await self._get_json(f"{self.api_root}/models", params)
            models += [_model(m) for m in page.get("models") or [] if isinstance(m, dict)]
            token = page.get("nextPageToken") or None
            if not isinstance(token, str) or token in seen:
                break
            seen.add(token)
        return [m for m in models if m.chat or not chat_only]

    async def _get_json(self, url: str, params: Mapping[str, str]) -> dict[str, Any]:
        try:
            response = await self._http().get(url, params=params, headers=self._headers())
        except httpx.RequestError as exc:
            raise self._network_error(exc) from None
        if response.status_code >= 400:
            raise self._scrubbed(self._http_error(response, response.content))
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise RetryableError(f"malformed answer from {url}")
        return data

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()


def from_config(cfg: ProviderConfig, key: str | None = None) -> GeminiProvider:
    """A provider from configuration; the key falls back to GEMINI_API_KEY, GOOGLE_API_KEY."""
    for variable in KEY_VARIABLES:
        key = key or os.environ.get(variable) or None
    headers = cfg.options.get("headers") or {}
    return GeminiProvider(
        cfg.name,
        cfg.base_url or DEFAULT_BASE_URL,
        api_key=key,
        headers={str(k): str(v) for k, v in headers.items()},
        options=cfg.options,
    )


def _model(data: dict[str, Any]) -> GeminiModel:
    def number(name: str) -> int | None:
        value = data.get(name)
        return value if isinstance(value, int) and value > 0 else None

    methods = data.get("supportedGenerationMethods")
    thinking = data.get("thinking")
    return GeminiModel(
        id=str(data.get("name") or "").removeprefix("models/"),
        display_name=str(data.get("displayName") or ""),
        description=str(data.get("description") or ""),
        input_token_limit=number("inputTokenLimit"),
        output_token_limit=number("outputTokenLimit"),
        thinking=thinking if isinstance(thinking, bool) else None,
        methods=tuple(str(m) for m in methods) if isinstance(methods, list) else (),
    )


@dataclass(frozen=True, slots=True)
class _ErrorDetail:
    message: str
    status: str = ""
    retry_delay: float | None = None
    key_invalid: bool = False

    @classmethod
    def parse(cls, body: bytes, fallback: str) -> _ErrorDetail:
        """Gemini's `{"error": {"code", "message", "status", "details": [...]}}`."""
        message = error_message(body, fallback)
        try:
            error = json.loads(body).get("error")
        except (ValueError, AttributeError):
            error = None
        if not isinstance(error, dict):
            return cls(message)
        delay: float | None = None
        key_invalid = False
        for item in error.get("details") or []:
            if not isinstance(item, dict):
                continue
            key_invalid = key_invalid or item.get("reason") == "API_KEY_INVALID"
            text = item.get("retryDelay")
            if isinstance(text, str) and text.endswith("s"):
                try:
                    delay = max(0.0, float(text[:-1]))
                except ValueError:
                    pass
        key_invalid = key_invalid or "API key not valid" in message
        return cls(message, str(error.get("status") or ""), delay, key_invalid)


def _whole_answer(body: bytes) -> list[StreamEvent]:
    """A server that answered one JSON document (or a JSON array of chunks), not a stream."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    chunks = data if isinstance(data, list) else [data]
    if not chunks or not all(isinstance(c, dict) for c in chunks):
        snippet = body[:80].decode("utf-8", "replace")
        raise RetryableError(f"malformed response: expected an event stream, got {snippet!r}")
    state = GeminiStreamState()
    events: list[StreamEvent] = []
    for chunk in chunks:
        events += from_wire(chunk, state)
    return events + finish(state)


async def _read_stream(response: httpx.Response) -> AsyncIterator[StreamEvent]:
    state = GeminiStreamState()
    async for event in aiter_sse(response.aiter_bytes()):
        data = event.data.strip()
        if not data:
            continue
        try:
            chunk = json.loads(data)
        except ValueError:
            chunk = None
        if not isinstance(chunk, dict):
            state.malformed.append(data)
            continue
        for item in from_wire(chunk, state):
            yield item
    for item in finish(state):
        yield item
