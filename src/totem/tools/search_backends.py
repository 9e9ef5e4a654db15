"""The web search backends: one request and one answer shape each, to a list of `Hit`s.

    searxng   GET  {url}/search?q=...&format=json          results[].title/url/content
    brave     GET  {url}?q=...&count=N                     web.results[].title/url/description
              header X-Subscription-Token: KEY
    tavily    POST {url} {"query", "max_results"}          results[].title/url/content
              header Authorization: Bearer KEY
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx

from totem import __version__
from totem.settings.integrations import SearchSettings
from totem.tools.base import ToolError

__all__ = ["Hit", "search"]

TIMEOUT = 20.0
_NAMES = {"searxng": "The search server", "brave": "Brave Search", "tavily": "Tavily"}


@dataclass(frozen=True, slots=True)
class Hit:
    title: str
    url: str
    snippet: str


def _request(settings: SearchSettings, query: str, limit: int, key: str | None) -> httpx.Request:
    headers = {"User-Agent": f"totem/{__version__}", "Accept": "application/json"}
    match settings.backend:
        case "searxng":
            base = settings.url
            endpoint = base if base.endswith("/search") else base + "/search"
            return httpx.Request("GET", endpoint, params={"q": query, "format": "json"},
                                 headers=headers)
        case "brave":
            return httpx.Request("GET", settings.url, params={"q": query, "count": limit},
                                 headers={**headers, "X-Subscription-Token": key or ""})
        case "tavily":
            return httpx.Request("POST", settings.url,
                                 json={"query": query, "max_results": limit},
                                 headers={**headers, "Authorization": f"Bearer {key}"})


def _results(settings: SearchSettings, payload: Any) -> list[Any] | None:
    if not isinstance(payload, dict):
        return None
    if settings.backend == "brave":
        web = payload.get("web")
        if web is None:  # Brave leaves `web` out when nothing was found
            return []
        found = web.get("results") if isinstance(web, dict) else None
    else:
        found = payload.get("results")
    return found if isinstance(found, list) else None


def _hit(settings: SearchSettings, result: Any) -> Hit | None:
    if not isinstance(result, dict) or not isinstance(result.get("url"), str):
        return None
    snippet = result.get("description" if settings.backend == "brave" else "content")
    return Hit(_plain(result.get("title")), result["url"], _plain(snippet))


def _plain(value: object) -> str:
    """Text without HTML tags (Brave marks the matched words) and runs of spaces."""
    if not isinstance(value, str):
        return ""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]{1,40}>", "", value)).strip()


async def search(settings: SearchSettings, query: str, *, limit: int, key: str | None) -> list[Hit]:
    """The hits for `query`; a ToolError that says what went wrong, never the key."""
    name = _NAMES[settings.backend]
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            response = await client.send(_request(settings, query, limit, key))
    except httpx.HTTPError as exc:
        raise ToolError(f"{name} could not be reached: {type(exc).__name__}.") from None
    _check_status(settings, response.status_code)
    try:
        payload = response.json()
    except ValueError:
        raise ToolError(f"{name} did not answer JSON.") from None
    found = _results(settings, payload)
    if found is None:
        raise ToolError(f"{name}'s answer has no result list.")
    return [hit for hit in (_hit(settings, r) for r in found) if hit is not None]


def _check_status(settings: SearchSettings, status: int) -> None:
    name = _NAMES[settings.backend]
    if status == 403 and settings.backend == "searxng":
        raise ToolError(
            "The search server refused the JSON format (HTTP 403); enable `json` in its "
            "search formats. Use fetch on a known URL meanwhile."
        )
    if status in (401, 403):
        raise ToolError(f"{name} refused the key (HTTP {status}); check tools.websearch.key.")
    if status == 429:
        raise ToolError(f"{name} limits the searches (HTTP 429); search again later.")
    if status >= 400:
        raise ToolError(f"{name} answered HTTP {status}.")
