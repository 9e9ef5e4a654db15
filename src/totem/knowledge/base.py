"""The types of a knowledge pack: what it plans, finds and checks.

    Pack     the protocol a framework's pack implements (the Total.js one is `totaljs/`)
    Query    what to search for before the first step: the words, the product, whether the
             request asks for a recipe (e.g. "make a component")
    Docs     a documentation server as the pack sees it: a tool's parameters, a call
    Page     one documentation page: id, title, address, and its text when fetched
    Pages    a search's outcome: the pages put into the system prompt and the others listed
    Finding  one place where a written file breaks a convention
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from totem.settings.config import KnowledgeSettings

__all__ = ["Docs", "DocsError", "Finding", "Pack", "Page", "Pages", "Query"]


class DocsError(Exception):
    """The documentation server failed to answer; the message says why."""


@dataclass(frozen=True, slots=True)
class Query:
    text: str  # the words sent to the search
    product: str  # e.g. "jcomponent" or "total5"
    product_title: str  # e.g. "jComponent 20"
    recipe: str = ""  # the recipe asked for ("component"), or ""


@dataclass(frozen=True, slots=True)
class Page:
    id: str
    title: str
    url: str = ""
    text: str = ""  # the page's text (at most the configured characters), when fetched
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class Pages:
    query: Query
    server: str  # the documentation server's name
    page_tool: str  # the model's name for the tool that reads a page (server__tool)
    used: list[Page] = field(default_factory=list)
    others: list[Page] = field(default_factory=list)

    def section(self) -> str:
        """The system prompt's part: the pages used, then the others listed by id."""
        if not self.used and not self.others:
            return ""
        query = self.query
        head = (
            f"Documentation for this request, looked up before your first step on the "
            f"'{self.server}' documentation server ({query.product_title}, search "
            f"\"{query.text}\"). Prefer it to what you remember."
        )
        parts = [head]
        for page in self.used:
            where = page.url or page.id
            cut = "\n[... the page goes on; read all of it with the page tool ...]"
            parts.append(f"## {page.title} ({where})\n{page.text.strip()}"
                         + (cut if page.truncated else ""))
        if self.others:
            listed = "\n".join(f"- {p.title} (id: {p.id})" for p in self.others)
            parts.append(f"Other pages found (read one with {self.page_tool}):\n{listed}")
        return "\n\n".join(parts)

    def notice(self) -> str:
        """What the conversation shows: which pages went into the prompt."""
        query = self.query
        where = f"{self.server}, {query.product_title}: \"{query.text}\""
        if not self.used:
            return f"Documentation ({where}): nothing found."
        titles = ", ".join(f"\"{p.title}\"" for p in self.used)
        more = ""
        if self.others:
            count = len(self.others)
            more = f"; {count} more page{'' if count == 1 else 's'} listed for {self.page_tool}"
        return f"Documentation used ({where}): {titles}{more}."


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str  # the rule's id, e.g. "tabs"
    line: int  # 1-based; 0 for the whole file (its name)
    message: str  # written for the model: what to change


class Docs(Protocol):
    """A documentation server's tools, as a pack calls them."""

    server: str

    def parameters(self, tool: str) -> list[str]:
        """The names of the tool's parameters (required ones first); [] for no such tool."""
        ...

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """The tool's answer as text; DocsError when the server fails."""
        ...


class Pack(Protocol):
    """A framework's knowledge. Every method is cheap except `prestep`."""

    name: str  # e.g. "totaljs"
    title: str  # e.g. "Total.js"
    server: str  # the documentation server's name ("forge"); a project server of the same
    # name replaces the built-in one
    skills: tuple[str, ...]  # built-in skills that belong to the pack

    def detect(self, root: Path, settings: KnowledgeSettings) -> bool: ...

    def primer(self) -> str: ...

    def docs_enabled(self, settings: KnowledgeSettings) -> bool: ...

    def server_config(self) -> dict[str, Any]:
        """The built-in documentation server, as an `mcpServers` entry."""
        ...

    def plan(self, prompt: str) -> Query | None:
        """What to search for before the first step; None for prompts not worth a search."""
        ...

    async def prestep(self, query: Query, docs: Docs, *, pages: int, chars: int) -> Pages: ...

    def checks(self, root: Path, settings: KnowledgeSettings) -> bool:
        """Whether files written in `root` are checked against the conventions."""
        ...

    def wants(self, path: Path) -> bool:
        """Whether `check` has something to say about files of this kind."""
        ...

    def check(self, path: Path, text: str) -> list[Finding]:
        """`path` relative to the project root; `text` the file's content."""
        ...
