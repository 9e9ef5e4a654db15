"""Gemini (Google AI Studio, `generativelanguage.googleapis.com`): the adapter.

`GeminiProvider.stream` posts `gemini_wire.to_wire(...)` to
`{base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse` with the key in the
`x-goog-api-key` header (never in the URL, so it cannot leak into an error or a log), reads
the SSE stream with `sse.py`, and maps it back with `gemini_wire.from_wire` / `finish`.
`list_models()` pages through GET `/v1beta/models`. Failures become the errors of `base.py`
through `http.HttpProvider`; Gemini's own shape is read on top: `error.status`
("RESOURCE_EXHAUSTED" ...), a `RetryInfo.retryDelay` when no Retry-After header came, and a
400 whose reason is API_KEY_INVALID, which is an `AuthError`. The adapter never retries.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from totem.providers.base import AuthError, ModelRequest, ProviderError, StreamEvent
from totem.providers.transport.http import (
    HttpProvider,
    json_body,
    json_object,
    json_or_none,
    json_stream,
    not_a_stream,
    or_whole_answer,
    sse_data,
)
from totem.providers.transport.retry import error_message
from totem.providers.wire.gemini import GeminiStreamState, finish, from_wire, to_wire

if TYPE_CHECKING:
    from totem.settings.config import ProviderConfig

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


class GeminiProvider(HttpProvider):
    """A configured Gemini endpoint: base URL, key, extra headers, options."""

    default_base_url = DEFAULT_BASE_URL
    key_header = "x-goog-api-key"
    key_scheme = ""

    @property
    def _version(self) -> str:
        return str(self.options.get("api_version") or "v1beta")

    def _root(self, base_url: str) -> str:
        return super()._root(base_url).removesuffix(f"/{self._version}")

    @property
    def api_root(self) -> str:
        """Where the API lives: `{base_url}/{api_version}`."""
        return f"{self.base_url}/{self._version}"

    def _missed(self, request: httpx.Request) -> str:
        return f" ({request.method} {request.url.path})"

    def _http_error(self, response: httpx.Response, body: bytes) -> ProviderError:
        detail = _ErrorDetail.parse(body, response.reason_phrase or "error")
        message = detail.message
        if response.status_code == 404:
            message += self._missed(response.request)
        if detail.key_invalid:
            text = self._status_text(response, message, detail.status)
            return AuthError(text + self._key_hint(), status=response.status_code)
        return self._status_error(response, message, kind=detail.status,
                                  retry_after=detail.retry_delay)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        body = json_body(to_wire(request, options=self.options, provider=self.name))
        model = request.model.removeprefix("models/")
        url = f"{self.api_root}/models/{model}:streamGenerateContent?alt=sse"
        async with self._post_stream(url, body) as response:
            streamed = json_stream(sse_data(response), GeminiStreamState(), from_wire, finish)
            async for event in or_whole_answer(response, streamed, _whole_answer):
                yield event

    async def list_models(self, *, chat_only: bool = True) -> list[GeminiModel]:
        """Every model of GET /v1beta/models, page after page (`nextPageToken`).

        With `chat_only`, only those that answer `generateContent`.
        """
        models: list[GeminiModel] = []
        token: str | None = None
        seen: set[str] = set()
        url = f"{self.api_root}/models"
        for _ in range(MAX_PAGES):
            params = {"pageSize": str(PAGE_SIZE), **({"pageToken": token} if token else {})}
            page = json_object(await self._get(url, params=params), f"answer from {url}")
            models += [_model(m) for m in page.get("models") or [] if isinstance(m, dict)]
            token = page.get("nextPageToken") or None
            if not isinstance(token, str) or token in seen:
                break
            seen.add(token)
        return [m for m in models if m.chat or not chat_only]


def from_config(cfg: ProviderConfig, key: str | None = None) -> GeminiProvider:
    """A provider from configuration; the key falls back to GEMINI_API_KEY, GOOGLE_API_KEY."""
    for variable in KEY_VARIABLES:
        key = key or os.environ.get(variable) or None
    return GeminiProvider.from_config(cfg, key)


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
    data = json_or_none(body)
    chunks = data if isinstance(data, list) else [data]
    if not chunks or not all(isinstance(c, dict) for c in chunks):
        raise not_a_stream(body)
    state = GeminiStreamState()
    events: list[StreamEvent] = []
    for chunk in chunks:
        events += from_wire(chunk, state)
    return events + finish(state)
