"""Anthropic Messages over httpx: the provider half of the adapter.

The mapping lives in `anthropic_wire.py` (pure functions, re-exported here); this module
adds the HTTP: POST {base_url}/v1/messages with `x-api-key` and `anthropic-version`, the
event stream read with the shared SSE decoder, and GET /v1/models with paging; the client,
the key and the mapping of every failure to the errors of `base.py` come from
`http.HttpProvider`. It never retries. The official SDK is not imported: it costs over a
second at start-up.

The API key is sent only as `x-api-key` and appears in no message and no repr.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from totem.providers.base import ModelRequest, StreamEvent
from totem.providers.transport.http import (
    HttpProvider,
    decode_stream,
    json_body,
    json_object,
    json_or_none,
    not_a_stream,
    or_whole_answer,
)
from totem.providers.transport.sse import SSEEvent, aiter_sse
from totem.providers.wire.anthropic import (
    ABORTED_OUTPUT,
    MessagesStreamState,
    cache_markers,
    finish,
    from_sse,
    from_wire,
    to_wire,
)

if TYPE_CHECKING:
    from totem.settings.config import ProviderConfig

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


class AnthropicProvider(HttpProvider):
    """A configured Anthropic endpoint: base URL (without /v1), key, headers, options."""

    default_base_url = DEFAULT_BASE_URL
    fixed_headers = {"anthropic-version": API_VERSION}
    key_header = "x-api-key"
    key_scheme = ""

    def _root(self, base_url: str) -> str:
        base = super()._root(base_url)
        return base[:-3] if base.endswith("/v1") else base

    def _key_hint(self) -> str:
        if self._api_key:
            return super()._key_hint()
        return f" (provider {self.name} has no key: set {KEY_ENV} or its key in the config)"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        body = json_body(to_wire(request, options=self.options, provider=self.name))
        async with self._post_stream(f"{self.base_url}/v1/messages", body) as response:
            events = aiter_sse(response.aiter_bytes())
            streamed = decode_stream(events, MessagesStreamState(), _from_sse, finish)
            async for event in or_whole_answer(response, streamed, _whole_answer):
                yield event

    async def list_models(self) -> list[str]:
        """The model ids of GET {base_url}/v1/models, every page of them."""
        ids: list[str] = []
        after: str | None = None
        for _ in range(MAX_MODEL_PAGES):
            params = {"limit": "1000", **({"after_id": after} if after else {})}
            response = await self._get(f"{self.base_url}/v1/models", params=params)
            page = json_object(response, "model list from the server")
            data = page.get("data") or []
            ids += [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]
            last = page.get("last_id") or (ids[-1] if ids else None)
            if not page.get("has_more") or not last or last == after:
                break
            after = str(last)
        return ids


def from_config(cfg: ProviderConfig, key: str | None) -> AnthropicProvider:
    """The provider for a configuration entry; the key falls back to ANTHROPIC_API_KEY."""
    import os

    return AnthropicProvider.from_config(cfg, key or os.environ.get(KEY_ENV) or None)


def _whole_answer(body: bytes) -> list[StreamEvent]:
    """A server that answered with one Message document instead of a stream."""
    data = json_or_none(body)
    if not isinstance(data, dict) or data.get("type") not in ("message", "error"):
        raise not_a_stream(body)
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


def _from_sse(event: SSEEvent, state: MessagesStreamState) -> list[StreamEvent]:
    return from_sse(event.event, event.data, state)
