"""A documentation server's search and pages, used before the first step.

    search(query, docs, ...) -> Pages     search, then fetch the best pages (together)
    McpDocs(connection)                   a started MCP server as `Docs`
    parse_results(text) -> list[Page]     a search answer, JSON or Markdown links, as pages

The arguments follow the tools' own schemas: a `product` parameter gets the product (else
the product's name leads the query), `limit` the number of results wanted, and the page tool
gets the result's id, url, slug or path, whichever it asks for.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import TYPE_CHECKING, Any

from totem.knowledge.base import Docs, DocsError, Page, Pages, Query

if TYPE_CHECKING:
    from totem.mcp.connection import Connection

__all__ = ["McpDocs", "parse_results", "search"]

MAX_LISTED = 8  # other results listed for the page tool
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_ID_KEYS = ("id", "slug", "path", "page", "url", "uri", "link")
_TITLE_KEYS = ("title", "name", "heading", "label")
_URL_KEYS = ("url", "link", "href", "uri")
_LIST_KEYS = ("results", "items", "pages", "data", "hits", "matches")
_QUERY_KEYS = ("query", "q", "search", "text", "keywords")


class McpDocs:
    """The tools of a started MCP server, called directly (starting it was the consent)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.server = connection.name

    def parameters(self, tool: str) -> list[str]:
        for remote in self.connection.tools:
            if remote.name == tool:
                schema = remote.input_schema or {}
                names = list((schema.get("properties") or {}).keys())
                required = [n for n in schema.get("required") or [] if n in names]
                return required + [n for n in names if n not in required]
        return []

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        import mcp_types as types

        from totem.mcp.connection import McpServerError

        try:
            result = await self.connection.call(tool, arguments)
        except McpServerError as exc:
            raise DocsError(str(exc)) from None
        texts = [b.text for b in result.content if isinstance(b, types.TextContent)]
        if not texts and result.structured_content is not None:
            texts = [json.dumps(result.structured_content, ensure_ascii=False)]
        text = "\n".join(texts)
        if result.is_error:
            raise DocsError(text or f"{tool} failed without saying why")
        return text


async def search(
    query: Query, docs: Docs, *, search_tool: str, page_tool: str, pages: int, chars: int
) -> Pages:
    """Search, then read the best `pages` results (at most `chars` characters each)."""
    from totem.mcp.config import tool_name

    wanted = docs.parameters(search_tool)
    if not wanted:
        raise DocsError(f"the server '{docs.server}' has no tool {search_tool}")
    key = next((k for k in wanted if k in _QUERY_KEYS), wanted[0])
    arguments: dict[str, Any] = {key: query.text}
    if "product" in wanted:
        arguments["product"] = query.product
    else:
        arguments[key] = f"{query.product_title} {query.text}"
    if "limit" in wanted:
        arguments["limit"] = pages + MAX_LISTED
    found = parse_results(await docs.call(search_tool, arguments))
    best, rest = found[:pages], found[pages : pages + MAX_LISTED]
    texts = await asyncio.gather(*(_read(docs, page_tool, page) for page in best))
    used = [_cut(page, text, chars) for page, text in zip(best, texts, strict=True)]
    return Pages(query, docs.server, tool_name(docs.server, page_tool), used, rest)


async def _read(docs: Docs, tool: str, page: Page) -> str:
    wanted = docs.parameters(tool)
    if not wanted:
        raise DocsError(f"the server '{docs.server}' has no tool {tool}")
    key = next((k for k in wanted if k in _ID_KEYS), wanted[0])
    value = page.url if key in _URL_KEYS and page.url else page.id
    return await docs.call(tool, {key: value})


def _cut(page: Page, text: str, chars: int) -> Page:
    text = text.strip()
    if len(text) <= chars:
        return Page(page.id, page.title, page.url, text)
    cut = text[:chars]
    at = cut.rfind("\n")
    return Page(page.id, page.title, page.url, cut[:at] if at > chars // 2 else cut, True)


def parse_results(text: str) -> list[Page]:
    """Search results from JSON (a list, or an object holding one) or Markdown links."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        data = next((data[k] for k in _LIST_KEYS if isinstance(data.get(k), list)), None)
    if isinstance(data, list):
        pages = [p for p in (_page(item) for item in data) if p is not None]
        return list({p.id: p for p in pages}.values())
    links = [Page(target, title.strip(), target if "://" in target else "")
             for title, target in _LINK.findall(text)]
    return list({p.id: p for p in links}.values())


def _page(item: Any) -> Page | None:
    if isinstance(item, str):
        return Page(item, item)
    if not isinstance(item, dict):
        return None
    ident = next((str(item[k]) for k in _ID_KEYS if item.get(k)), "")
    if not ident:
        return None
    title = next((str(item[k]) for k in _TITLE_KEYS if item.get(k)), ident)
    url = next((str(item[k]) for k in _URL_KEYS if item.get(k)), "")
    return Page(ident, title, url)
