"""fetch: a web page as Markdown, text or HTML; http(s) only, asked per host.

Redirects are followed by hand (at most MAX_REDIRECTS) so that each hop's scheme is checked
and a new host is asked for like the first. The whole fetch has a time limit, the body a
size limit; binary content is refused. HTML is converted with markdownify (imported when a
page needs it).
"""

from __future__ import annotations

import asyncio
import re
import warnings
from typing import TYPE_CHECKING, ClassVar, Literal
from urllib.parse import urljoin

import httpx
from pydantic import BaseModel, Field

from totem import __version__
from totem.tools.base import ToolContext, ToolError, ToolResult, truncate

if TYPE_CHECKING:
    from bs4 import BeautifulSoup

__all__ = ["Fetch", "FetchInput"]

TIMEOUT = 30.0  # seconds for the whole fetch, redirects included
MAX_BYTES = 5 * 1024 * 1024  # of the body read; the rest is cut
MAX_REDIRECTS = 5
MAX_CHARS = 100_000  # the most `max_chars` may ask for
_SCHEMES = ("http", "https")
_TEXT_TYPES = ("application/json", "application/xml", "application/javascript")
_TEXT_SUFFIXES = ("+json", "+xml")
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_DROPPED_TAGS = ("head", "script", "style", "noscript", "template", "svg", "iframe", "object")
_ACCEPT = {
    "markdown": "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.1",
    "text": "text/plain, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1",
    "html": "text/html, application/xhtml+xml;q=0.9, */*;q=0.1",
}


class FetchInput(BaseModel):
    url: str = Field(description="An http(s) URL.")
    format: Literal["markdown", "text", "html"] = Field(
        "markdown", description="How to return an HTML page."
    )
    max_chars: int | None = Field(None, ge=100, le=MAX_CHARS, description="Most characters kept.")


class Fetch:
    name: ClassVar[str] = "fetch"
    description: ClassVar[str] = "Fetch a URL; returns the page as Markdown (or text or HTML)."
    read_only: ClassVar[bool] = True
    Input: ClassVar[type[BaseModel]] = FetchInput

    async def run(self, args: FetchInput, ctx: ToolContext) -> ToolResult:
        url = _checked(args.url.strip())
        body, response, cut = await ctx.abort.until(_download(url, args.format, ctx))
        media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        text = _render(body, response, media_type, args.format)
        notes = []
        if str(response.url) != str(url):
            notes.append(f"[Redirected to {response.url}]")
        if cut:
            notes.append(f"[The body was cut at {MAX_BYTES // (1024 * 1024)} MB.]")
        limit = min(args.max_chars or ctx.settings.output_limit, MAX_CHARS)
        text = truncate(text.strip() or "(empty page)", limit, hint="ask for less or search")
        output = "\n".join([*notes, text]) if notes else text
        return ToolResult(output, title=str(response.url))


def _checked(raw: str, *, base: httpx.URL | None = None) -> httpx.URL:
    """The URL (joined to `base` for a redirect) when it is http(s) with a host."""
    try:
        url = base.join(raw) if base is not None else httpx.URL(raw)
    except (httpx.InvalidURL, ValueError) as exc:
        raise ToolError(f"'{raw}' is not a valid URL ({exc}).") from None
    where = f"The redirect to '{raw}'" if base is not None else f"'{raw}'"
    if url.scheme not in _SCHEMES:
        scheme = f"'{url.scheme}:'" if url.scheme else "no scheme"
        raise ToolError(
            f"{where} has {scheme}; fetch only reads http:// and https:// URLs. "
            "Use read for files in the project."
        )
    if not url.host:
        raise ToolError(f"{where} has no host.")
    return url


async def _download(
    url: httpx.URL, format: str, ctx: ToolContext
) -> tuple[bytes, httpx.Response, bool]:
    """The body (at most MAX_BYTES), the final response and whether the body was cut."""
    headers = {"User-Agent": f"totem/{__version__}", "Accept": _ACCEPT[format]}
    asked: set[str] = set()
    loop = asyncio.get_running_loop()
    try:
        async with (
            asyncio.timeout(TIMEOUT) as timer,
            httpx.AsyncClient(timeout=TIMEOUT, headers=headers) as client,
        ):
            for _ in range(MAX_REDIRECTS + 1):
                if url.host not in asked:
                    # The time the person takes to answer does not count.
                    left = (timer.when() or loop.time()) - loop.time()
                    timer.reschedule(None)
                    await ctx.ask("fetch", [url.host], title=f"fetch {url}")
                    timer.reschedule(loop.time() + left)
                    asked.add(url.host)
                async with client.stream("GET", url) as response:
                    location = response.headers.get("location")
                    if response.is_redirect and location:
                        url = _checked(location, base=url)
                        continue
                    _check_status(response)
                    _check_type(response)
                    body, cut = await _read(response)
                    return body, response, cut
    except TimeoutError:
        raise ToolError(f"Fetching {url} took longer than {TIMEOUT:g} s; it was stopped.") from None
    except httpx.HTTPError as exc:
        raise ToolError(f"Could not fetch {url}: {exc or type(exc).__name__}.") from None
    raise ToolError(f"{url}: more than {MAX_REDIRECTS} redirects; stopped.")


def _check_status(response: httpx.Response) -> None:
    if response.status_code >= 400:
        raise ToolError(
            f"{response.url} answered HTTP {response.status_code} {response.reason_phrase}."
        )


def _check_type(response: httpx.Response) -> None:
    media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if not media_type or _is_text(media_type):
        return
    size = response.headers.get("content-length")
    of = f", {size} bytes" if size and size.isdigit() else ""
    raise ToolError(
        f"{response.url} is binary content ({media_type}{of}); fetch returns text only. "
        "Use bash (curl -o) to save it to a file if you need it."
    )


def _is_text(media_type: str) -> bool:
    return (
        media_type.startswith("text/")
        or media_type in _TEXT_TYPES
        or media_type in _HTML_TYPES
        or media_type.endswith(_TEXT_SUFFIXES)
    )


async def _read(response: httpx.Response) -> tuple[bytes, bool]:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > MAX_BYTES:
            del body[MAX_BYTES:]
            return bytes(body), True
    return bytes(body), False


def _render(body: bytes, response: httpx.Response, media_type: str, format: str) -> str:
    if not media_type and b"\0" in body[:8192]:
        raise ToolError(f"{response.url} is binary content; fetch returns text only.")
    text = body.decode(response.charset_encoding or "utf-8", errors="replace")
    if media_type not in _HTML_TYPES and not (not media_type and _looks_like_html(text)):
        return text
    if format == "html":
        return text
    return _convert(text, str(response.url), markdown=format == "markdown")


def _looks_like_html(text: str) -> bool:
    head = text[:1024].lstrip().lower()
    return head.startswith(("<!doctype html", "<html"))


def _convert(html: str, url: str, *, markdown: bool) -> str:
    """HTML as Markdown (headings, links made absolute, code blocks) or as plain text."""
    from bs4 import BeautifulSoup

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bs4 warns about odd markup; the page is what it is
        soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(_DROPPED_TAGS):
        tag.decompose()
    _absolute_links(soup, url)
    if markdown:
        from markdownify import MarkdownConverter

        text = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    else:
        text = soup.get_text("\n")
        text = "\n".join(line.strip() for line in text.splitlines())
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    if title and markdown:
        return f"Title: {title}\n\n{text}"
    return f"{title}\n\n{text}" if title else text


def _absolute_links(soup: BeautifulSoup, url: str) -> None:
    for attribute, tags in (("href", ("a",)), ("src", ("img",))):
        for tag in soup.find_all(tags):
            value = tag.get(attribute)
            if isinstance(value, str) and not value.startswith(("#", "data:", "javascript:")):
                tag[attribute] = urljoin(url, value)
