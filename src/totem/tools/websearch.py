"""websearch: a web search through a SearXNG server's JSON API; absent until one is set.

`websearch_tool(url)` gives the tool for a configured backend and None otherwise, so that a
model is never offered a search that cannot work. The server must allow the JSON format
(`search: formats: [html, json]` in SearXNG's settings.yml).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import httpx
from pydantic import BaseModel, Field

from totem import __version__
from totem.tools.base import Tool, ToolContext, ToolError, ToolResult, truncate

__all__ = ["WebSearch", "WebSearchInput", "websearch_tool"]

TIMEOUT = 20.0
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
SNIPPET = 300  # characters kept of each result's snippet


class WebSearchInput(BaseModel):
    query: str = Field(description="What to search for.")
    limit: int | None = Field(None, ge=1, le=MAX_LIMIT, description="Results (default 5).")


class WebSearch:
    name: ClassVar[str] = "websearch"
    kind: ClassVar[str] = "websearch"
    description: ClassVar[str] = "Search the web; returns titles, URLs and snippets."
    read_only: ClassVar[bool] = True
    Input: ClassVar[type[BaseModel]] = WebSearchInput

    def __init__(self, url: str) -> None:
        base = url.strip().rstrip("/")
        self.endpoint = base if base.endswith("/search") else base + "/search"

    async def run(self, args: WebSearchInput, ctx: ToolContext) -> ToolResult:
        query = args.query.strip()
        if not query:
            raise ToolError("The query is empty.")
        await ctx.ask("websearch", [query], title=f"search the web for {query!r}")
        ctx.abort.check()
        results = await self._search(query)
        shown = results[: args.limit or DEFAULT_LIMIT]
        if not shown:
            return ToolResult(f"No results for {query!r}.", title=query)
        text = "\n".join(_entry(number, result) for number, result in enumerate(shown, 1))
        return ToolResult(truncate(text, ctx.settings.output_limit), title=query)

    async def _search(self, query: str) -> list[dict[str, Any]]:
        params = {"q": query, "format": "json"}
        headers = {"User-Agent": f"totem/{__version__}", "Accept": "application/json"}
        try:
            async with httpx.AsyncClient(timeout=TIMEOUT, headers=headers) as client:
                response = await client.get(self.endpoint, params=params)
        except httpx.HTTPError as exc:
            raise ToolError(f"The search server could not be reached: {exc}.") from None
        if response.status_code == 403:
            raise ToolError(
                "The search server refused the JSON format (HTTP 403); enable `json` in its "
                "search formats. Use fetch on a known URL meanwhile."
            )
        if response.status_code >= 400:
            raise ToolError(f"The search server answered HTTP {response.status_code}.")
        try:
            payload = response.json()
        except ValueError:
            raise ToolError("The search server did not answer JSON.") from None
        found = payload.get("results") if isinstance(payload, dict) else None
        if not isinstance(found, list):
            raise ToolError("The search server's answer has no result list.")
        return [r for r in found if isinstance(r, dict) and isinstance(r.get("url"), str)]


def _entry(number: int, result: dict[str, Any]) -> str:
    title = _plain(result.get("title")) or result["url"]
    lines = [f"{number}. {title}", f"   {result['url']}"]
    snippet = _plain(result.get("content"))
    if snippet:
        if len(snippet) > SNIPPET:
            snippet = snippet[:SNIPPET].rsplit(" ", 1)[0] + "..."
        lines.append(f"   {snippet}")
    return "\n".join(lines)


def _plain(value: object) -> str:
    return re.sub(r"\s+", " ", value).strip() if isinstance(value, str) else ""


def websearch_tool(settings_url: str | None) -> Tool | None:
    """The websearch tool for a SearXNG server at `settings_url`; None when none is set."""
    if not settings_url or not settings_url.strip():
        return None
    return WebSearch(settings_url)
