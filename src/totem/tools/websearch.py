"""websearch: a web search through SearXNG, the Brave Search API or Tavily; absent until one
is configured (`tools.websearch`).

`websearch_tool(url)` gives the tool for a SearXNG URL and None otherwise, so that a model is
never offered a search that cannot work. A SearXNG server must allow the JSON format
(`search: formats: [html, json]` in its settings.yml). The answer is a compact numbered list
(title, URL, snippet), at most `MAX_LIMIT` results of `SNIPPET` characters each.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from totem.policy.redact import Redactor
from totem.settings.integrations import SearchSettings
from totem.tools.base import Tool, ToolContext, ToolError, ToolResult, truncate
from totem.tools.search_backends import Hit, search

__all__ = ["WebSearch", "WebSearchInput", "websearch_tool"]

DEFAULT_LIMIT = 5
MAX_LIMIT = 20
SNIPPET = 300  # characters kept of each result's snippet
MAX_CHARS = 8_000  # of the whole list, whatever the output limit


class WebSearchInput(BaseModel):
    query: str = Field(description="What to search for.")
    limit: int | None = Field(None, ge=1, le=MAX_LIMIT, description="Results (default 5).")


class WebSearch:
    name: ClassVar[str] = "websearch"
    kind: ClassVar[str] = "websearch"
    description: ClassVar[str] = "Search the web; returns titles, URLs and snippets."
    read_only: ClassVar[bool] = True
    Input: ClassVar[type[BaseModel]] = WebSearchInput

    def __init__(self, backend: str | SearchSettings) -> None:
        """`backend`: the settings, or a SearXNG server's URL."""
        if isinstance(backend, str):
            backend = SearchSettings("searxng", backend.strip().rstrip("/"))
        self.settings = backend
        base = backend.url
        self.endpoint = base if base.endswith("/search") or backend.backend != "searxng" \
            else base + "/search"

    async def run(self, args: WebSearchInput, ctx: ToolContext) -> ToolResult:
        query = args.query.strip()
        if not query:
            raise ToolError("The query is empty.")
        await ctx.ask("websearch", [query], title=f"search the web for {query!r}")
        ctx.abort.check()
        key = self.settings.key.reveal() if self.settings.key is not None else None
        if self.settings.key is not None and not key:
            raise ToolError(f"The search key is not available: tools.websearch.key is "
                            f"{self.settings.key.source()}.")
        limit = args.limit or DEFAULT_LIMIT
        hits = (await search(self.settings, query, limit=limit, key=key))[:limit]
        if not hits:
            return ToolResult(f"No results for {query!r}.", title=query)
        text = "\n".join(_entry(number, hit) for number, hit in enumerate(hits, 1))
        text = Redactor([key] if key else [])(text)
        return ToolResult(truncate(text, min(MAX_CHARS, ctx.settings.output_limit)), title=query)


def _entry(number: int, hit: Hit) -> str:
    lines = [f"{number}. {hit.title or hit.url}", f"   {hit.url}"]
    snippet = hit.snippet
    if snippet:
        if len(snippet) > SNIPPET:
            snippet = snippet[:SNIPPET].rsplit(" ", 1)[0] + "..."
        lines.append(f"   {snippet}")
    return "\n".join(lines)


def websearch_tool(settings_url: str | None) -> Tool | None:
    """The websearch tool for a SearXNG server at `settings_url`; None when none is set."""
    if not settings_url or not settings_url.strip():
        return None
    return WebSearch(settings_url)
