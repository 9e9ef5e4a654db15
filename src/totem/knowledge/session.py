"""One session's framework knowledge: which pack, its primer, its documentation server, and
the pages found before the first step of a run.

    knowledge = ProjectKnowledge(root, config.knowledge, store=store)
    knowledge.primer()                   "" when the project is no pack's
    knowledge.hidden_skills()            built-in skills of packs that do not apply here
    await knowledge.before_first_step(prompt, ...)   -> the documentation server's tools
    knowledge.pages_section()            the pages of the latest search, for the system prompt

The documentation server is an MCP server like any other: a project server of the same name
replaces the built-in one (then it starts with the project's servers), and the built-in one
asks before it starts, the first time a prompt is worth a search. When nobody can answer
(a headless run without --yes) it is not started. The search has SEARCH_TIMEOUT seconds;
a server that cannot be reached costs its start-up timeout and a notice, never the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, Literal

from totem.events import Event, Notice
from totem.knowledge import active_pack
from totem.settings.config import KnowledgeSettings

if TYPE_CHECKING:
    from pathlib import Path

    from totem.knowledge.base import Pack, Pages, Query
    from totem.mcp.config import ServerConfig
    from totem.mcp.connection import Connection
    from totem.mcp.manager import McpManager
    from totem.policy.permission import PermissionService
    from totem.policy.questions import QuestionService
    from totem.store.base import Store
    from totem.tools.base import Tool

__all__ = ["SEARCH_TIMEOUT", "ProjectKnowledge", "server_from_spec"]

SEARCH_TIMEOUT = 3.0  # seconds for the search and its pages, once the server is up


class ProjectKnowledge:
    def __init__(self, root: Path, settings: KnowledgeSettings, *, store: Store,
                 pack: Pack | None = None) -> None:
        self.root = root
        self.settings = settings
        self.store = store
        self.pack = pack if pack is not None else active_pack(root, settings)
        self.pages: Pages | None = None  # the latest search's; kept for later turns
        self.manager: McpManager | None = None  # the built-in documentation server
        self._skipped = False  # the built-in server could not be asked for; said once

    @property
    def active(self) -> bool:
        return self.pack is not None

    def primer(self) -> str:
        return self.pack.primer() if self.pack is not None else ""

    def hidden_skills(self) -> frozenset[str]:
        """Built-in skills not offered here: other packs', and this pack's when switched off."""
        from totem.knowledge import packs

        hidden = {s for p in packs() if p is not self.pack for s in p.skills}
        if self.pack is not None and not self.settings.conventions:
            hidden |= set(self.pack.skills)
        return frozenset(hidden)

    def pages_section(self) -> str:
        section = self.pages.section() if self.pages is not None else ""
        return f"\n\n{section}" if section else ""

    async def before_first_step(
        self,
        prompt: str | None,
        *,
        session_id: str,
        project: McpManager | None,
        declared: Collection[str],
        permission: PermissionService,
        questions: QuestionService | None,
        context_window: int | None,
        emit: Callable[[Event], None] | None = None,
    ) -> list[Tool]:
        """Search the documentation for `prompt` (None: a command, not searched) and keep the
        pages; return the built-in documentation server's tools once it has started. Its
        questions and notices go to `emit`, the run's event sink."""
        pack = self.pack
        if pack is None or not pack.docs_enabled(self.settings):
            return []
        query = pack.plan(prompt) if prompt is not None else None
        if query is not None:
            if pack.server in declared:
                connection = _ready(project, pack.server)
            else:
                connection = await self._builtin(pack, permission, questions, context_window,
                                                 emit)
            if connection is not None:
                await self._search(pack, query, connection, session_id, emit)
        return list(self.manager.tools) if self.manager is not None else []

    async def _builtin(
        self,
        pack: Pack,
        permission: PermissionService,
        questions: QuestionService | None,
        context_window: int | None,
        emit: Callable[[Event], None] | None,
    ) -> Connection | None:
        if self.manager is not None:
            self.manager.attach(emit)
        if self.manager is None and not self._skipped:
            if not self._may_ask(pack, permission, emit):
                return None
            from totem.mcp.config import McpConfig
            from totem.mcp.manager import McpManager

            server = server_from_spec(pack.server, pack.server_config(), source="built in")
            self.manager = McpManager(self.root, McpConfig({pack.server: server}),
                                      permission=permission, questions=questions,
                                      emit=emit, context_window=context_window)
            await self.manager.start()
        return _ready(self.manager, pack.server)

    def _may_ask(
        self, pack: Pack, permission: PermissionService, emit: Callable[[Event], None] | None
    ) -> bool:
        """Whether starting the server can be allowed at all; a notice once when it cannot
        for want of anyone to ask (this saves loading the MCP SDK for nothing)."""
        action = permission.action_for("mcp-start", pack.server)
        answered = permission.mode == "yes" or (
            permission.mode == "interactive" and emit is not None
        )
        if action == "allow" or (action == "ask" and answered):
            return True
        self._skipped = True
        if action == "ask" and emit is not None:
            emit(Notice(
                f"No documentation search: the {pack.title} documentation server "
                f"'{pack.server}' asks before it starts, and nobody can answer in this run "
                f"(pass --yes, or allow it: {{permission: mcp-start, pattern: {pack.server}, "
                "action: allow}; or set forge: false).",
            ))
        return False

    async def _search(
        self,
        pack: Pack,
        query: Query,
        connection: Connection,
        session_id: str,
        emit: Callable[[Event], None] | None,
    ) -> None:
        from totem.knowledge.base import DocsError
        from totem.knowledge.docs import McpDocs

        docs = McpDocs(connection)
        try:
            pages = await asyncio.wait_for(
                pack.prestep(query, docs, pages=self.settings.forgepages,
                             chars=self.settings.forgechars),
                SEARCH_TIMEOUT,
            )
        except (TimeoutError, DocsError) as exc:
            why = str(exc) if isinstance(exc, DocsError) else (
                f"no answer within {SEARCH_TIMEOUT:g} s")
            self._say(emit, session_id, f"The documentation search on '{connection.name}' "
                      f"failed ({why}); the run goes on without it.", "warning")
            return
        self.pages = pages
        self._say(emit, session_id, pages.notice(), "info")

    def _say(self, emit: Callable[[Event], None] | None, session_id: str, text: str,
             level: Literal["info", "warning"]) -> None:
        """A notice now, and in the stored conversation (on the run's user message)."""
        from totem.messages import NoticePart

        if emit is not None:
            emit(Notice(text, level))
        messages = self.store.messages(session_id)
        user = next((m for m in reversed(messages) if m.role == "user"), None)
        if user is not None:
            self.store.save_part(user.id, len(user.parts), NoticePart(text, level))

    async def aclose(self) -> None:
        if self.manager is not None:
            await self.manager.aclose()
            self.manager = None


def _ready(manager: McpManager | None, name: str) -> Connection | None:
    connection = manager.connections.get(name) if manager is not None else None
    return connection if connection is not None and connection.ready else None


def server_from_spec(name: str, spec: dict[str, Any], *, source: str) -> ServerConfig:
    """An `mcpServers` entry (url for HTTP, command and args for stdio) as a server config."""
    from totem.mcp.config import HttpServer, StdioServer
    from totem.settings.config import Secret

    startup = float(spec.get("startup_timeout", 3))
    timeout = float(spec.get("timeout", 20))
    if "url" in spec:
        headers = {str(k): Secret(str(v)) for k, v in (spec.get("headers") or {}).items()}
        return HttpServer(name=name, url=str(spec["url"]), headers=headers, timeout=timeout,
                          startup_timeout=startup, source=source)
    env = {str(k): Secret(str(v)) for k, v in (spec.get("env") or {}).items()}
    return StdioServer(name=name, command=str(spec["command"]),
                       args=tuple(str(a) for a in spec.get("args") or ()), env=env,
                       timeout=timeout, startup_timeout=startup, source=source)
