"""What `totem serve` holds for one project: the store, a hub per watched session, the
settings' generation (a change makes the next run read the configuration again) and the
models each provider lists."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from totem.messages import Message, ToolPart, Usage
from totem.policy.modes import MODES
from totem.server.hub import Hub
from totem.server.relayed_hub import RelayedHub
from totem.server.sessions import (
    count_messages,
    export,
    fork,
    info_json,
    messages_json,
    session_list,
    thread_ids,
)
from totem.server.settings import ModelCache
from totem.settings.config import Config, ConfigError, load_config
from totem.store.base import SessionInfo, Store

if TYPE_CHECKING:
    from totem.session.service import SessionService
    from totem.store.pg_relay import PgRelay
    from totem.store.pg_runs import RunClaims

__all__ = ["AnyHub", "ServerState"]

AnyHub = Hub | RelayedHub
KEEP_EVENTS_SECONDS = 7 * 86400  # a worker's start drops the relayed events older than this


class ServerState:
    def __init__(
        self, root: Path, store: Store, *,
        make_service: Callable[[], SessionService] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.project = str(self.root)
        self.store = store
        self.hubs: dict[str, AnyHub] = {}
        self.shared = _shared_runs(store)  # several workers on one PostgreSQL: None otherwise
        self.closing = asyncio.Event()  # set when the server stops: event streams end
        self.generation = 0
        self.models = ModelCache()
        self._make_service = make_service
        self._config: tuple[int, Config] | None = None
        self.config_error: str | None = None  # the configuration's error, for the page

    # configuration --------------------------------------------------------------------------

    def config(self) -> Config:
        if self._config is None or self._config[0] != self.generation:
            self.config_error = None
            try:
                config = load_config(self.root)
            except ConfigError as exc:
                config, self.config_error = Config(), str(exc)
            self._config = (self.generation, config)
        return self._config[1]

    def settings_changed(self) -> None:
        self.generation += 1
        self.models.clear()

    def make_service(self) -> SessionService:
        if self._make_service is not None:
            return self._make_service()
        from totem.session.service import SessionService

        return SessionService(self.root, mode="interactive", store=self.store)

    def cost(self, label: str, usage: dict[str, Any]) -> float | None:
        """USD for `usage` with the model `label` (provider/model); None when unknown."""
        from totem.providers.catalog.catalogue import cost, model_info

        name, _, model = label.partition("/")
        config = self.config()
        pconf = config.providers.get(name)
        if pconf is None and len(config.providers) == 1:
            pconf, model = next(iter(config.providers.values())), label
        price = model_info(pconf, model or label).price
        fields = {k: int(v) for k, v in usage.items() if k in Usage.__slots__}
        return cost(Usage(**fields), price)

    # sessions -------------------------------------------------------------------------------

    def _session(self, session_id: str) -> SessionInfo | None:
        found = self.store.get_session(session_id)
        return found if found is not None and found.project == self.project else None

    def hub(self, session_id: str) -> AnyHub | None:
        hub = self.hubs.get(session_id)
        if hub is None:
            if self._session(session_id) is None:
                return None
            hub = self.hubs[session_id] = self._new_hub(session_id)
        return hub

    def _new_hub(self, session_id: str) -> AnyHub:
        if self.shared is not None:
            relay, claims = self.shared
            return RelayedHub(session_id, relay=relay, claims=claims,
                              make_service=self.make_service, generation=self.generation,
                              costing=self.cost)
        return Hub(session_id, make_service=self.make_service, generation=self.generation,
                   costing=self.cost)

    async def open(self) -> None:
        """Before the first request: the shared runs' tables, when there are any, without
        the events of runs long over (their messages are in the store)."""
        if self.shared is not None:
            relay, claims = self.shared
            await relay.setup()
            await claims.setup()
            await relay.prune(older_than=KEEP_EVENTS_SECONDS)

    async def running_ids(self) -> set[str]:
        """The sessions with a run going on (on any worker, when they share the store)."""
        if self.shared is not None:
            return await self.shared[1].running()
        return {sid for sid, hub in self.hubs.items() if hub.running}

    async def busy(self, session_id: str) -> bool:
        hub = self.hubs.get(session_id)
        if self.shared is not None and hub is None:
            return session_id in await self.shared[1].running()
        return hub is not None and await hub.busy()

    def info(self) -> dict[str, Any]:
        from totem import __version__
        from totem.agents.load import load_agents
        from totem.session.commands import load_commands

        problems: list[str] = []
        commands = load_commands(self.root, problems=problems)
        agents = load_agents(self.root, self.store, problems=problems)
        return {
            "version": __version__,
            "root": self.project,
            "name": self.root.name,
            "model": self.config().model,
            "commands": [{"name": c.name, "description": c.description}
                         for c in commands.values()],
            "agents": [{"name": a.name, "description": a.description, "source": a.source}
                       for a in agents.values()],
            "problems": problems,
            "config_error": self.config_error,
            "trust": self.trust(),
            "modes": [{"name": m.name, "title": m.title, "description": m.description}
                      for m in MODES],
        }

    def trust(self) -> dict[str, Any]:
        """Whether the project's own config counts, and what it would change if trusted."""
        from totem.session.trust_items import trust_items
        from totem.settings.trust import is_trusted

        trusted = is_trusted(self.root)
        try:
            items = [] if trusted else trust_items(self.root)
        except ConfigError:
            items = []  # the error itself is in config_error
        return {"trusted": trusted or not items, "items": items}

    def trust_folder(self) -> None:
        """The person trusts the folder (the page's button): the next run reads it again."""
        from totem.settings.trust import remember

        remember(self.root)
        self.settings_changed()

    def session_list(self, query: str = "", *,
                     running: set[str] | None = None) -> list[dict[str, Any]]:
        """The project's sessions, those holding every word of `query` when it has some;
        `running`: those with a run going on."""
        running = running or set()
        if query.split():
            from totem.server.session_admin import search

            threads = thread_ids(self.store, self.project)
            listed = [info_json(s) for s in search(
                self.store, self.project, query.split()) if s.id not in threads]
        else:
            listed = session_list(self.store, self.project)
        for item in listed:
            item["running"] = item["id"] in running
        return listed

    def rename(self, session_id: str, title: str) -> dict[str, Any] | None:
        if self._session(session_id) is None:
            return None
        self.store.set_title(session_id, title[:200])
        found = self._session(session_id)
        return info_json(found) if found is not None else None

    def delete(self, session_id: str) -> str | None:
        """Delete the session (not while it runs); what went wrong, or None."""
        from totem.server.session_admin import delete

        if self._session(session_id) is None:
            return "no such session in this project"
        hub = self.hubs.get(session_id)
        if hub is not None and hub.running:
            return "stop the run before deleting the session"
        delete(self.store, session_id, threads=thread_ids(self.store, self.project))
        gone = self.hubs.pop(session_id, None)
        if gone is not None:
            asyncio.get_running_loop().create_task(gone.aclose())
        return None

    def new_session(self, model: str) -> dict[str, Any]:
        label = model or self.config().model or ""
        return info_json(self.store.create_session(project=self.project, model=label))

    async def snapshot(self, hub: AnyHub) -> dict[str, Any]:
        """The store up to the current run, and where its live events start (no overlap)."""
        info = self._session(hub.session_id)
        assert info is not None
        position = await hub.position()
        messages = self.store.messages(hub.session_id)
        usage, spent = Usage(), 0.0
        known = True
        for message in [*messages, *self._thread_messages(messages)]:
            usage.add(message.usage)
            if message.role == "assistant" and message.model:
                one = self.cost(message.model, _usage_dict(message.usage))
                known = known and one is not None
                spent += one or 0.0
        live = position.live
        if live is not None and position.cut is not None:
            messages = messages[: position.cut]
            usage, spent, known = Usage(), 0.0, known  # the log's steps add the run's usage
            for message in [*messages, *self._thread_messages(messages)]:
                usage.add(message.usage)
        return {
            "session": info_json(info),
            "messages": messages_json(messages),
            "live": live,
            "after": live["after"] if live is not None else position.last_id,
            "usage": _usage_dict(usage),
            "cost": spent if known and live is None else None,
            "children": self._children(hub.session_id),
        }

    def _thread_messages(self, messages: list[Message]) -> list[Message]:
        """The messages of the sub-agents that the task calls of `messages` started."""
        threads = [p.meta["session_id"] for m in messages for p in m.parts
                   if isinstance(p, ToolPart) and p.meta and p.meta.get("session_id")]
        return [m for t in threads for m in self.store.messages(t)]

    def _children(self, session_id: str) -> list[dict[str, Any]]:
        return [info_json(s) for s in self.store.list_sessions(self.project, limit=500)
                if s.parent_id == session_id]

    def fork(self, session_id: str, until: str | None) -> dict[str, Any] | str:
        source = self._session(session_id)
        if source is None:
            return "no such session in this project"
        hub = self.hubs.get(session_id)
        if hub is not None and hub.running and until is None:
            return "wait for the run to end, or fork from an earlier message"
        try:
            return info_json(fork(self.store, source, until=until))
        except KeyError:
            return "no such message in this session"

    def export(self, session_id: str) -> dict[str, Any] | None:
        from totem.policy.redact import Redactor

        info = self._session(session_id)
        if info is None:
            return None
        redact = Redactor.from_environment()
        for pconf in self.config().providers.values():
            if pconf.key is not None:
                redact.add(pconf.key.reveal())
        return export(self.store, info, redact=redact)

    def count(self, session_id: str) -> int:
        return count_messages(self.store, session_id)

    # agents and providers ---------------------------------------------------------------------

    def agents(self) -> dict[str, Any]:
        from totem.server.agents import agents_view

        view = agents_view(self.root, self.store)
        view["tools"] = self.tool_names()
        return view

    def tool_names(self) -> list[str]:
        from totem.tools.registry import builtin_tools

        return sorted({t.name for t in builtin_tools()} | {"task", "websearch"})

    def save_agent(self, data: dict[str, Any]) -> str | None:
        from totem.agents.definitions import AgentError
        from totem.server.agents import save_from_json

        try:
            save_from_json(self.root, self.store, data)
        except AgentError as exc:
            return str(exc)
        return None

    def delete_agent(self, scope: str, name: str) -> str | None:
        from totem.server.agents import delete_saved

        return None if delete_saved(self.root, self.store, scope=scope, name=name) else (
            f"no saved agent {name} ({scope})")

    def add_provider(self, data: dict[str, Any]) -> tuple[bool, str]:
        from totem.server.settings import add_provider
        from totem.settings.keys import KeyStoreError

        try:
            message = add_provider(
                template_id=str(data.get("template") or ""), name=str(data.get("name") or ""),
                url=str(data.get("url") or ""), key=str(data.get("key") or ""),
                key_env=str(data.get("key_env") or ""), replace=bool(data.get("replace")),
            )
        except (ValueError, ConfigError, KeyStoreError, OSError) as exc:
            return False, str(exc)
        self.settings_changed()
        return True, message

    def remove_provider(self, name: str) -> tuple[bool, str]:
        from totem.server.settings import remove_provider
        from totem.settings.keys import KeyStoreError

        try:
            message = remove_provider(name)
        except (ValueError, ConfigError, KeyStoreError, OSError) as exc:
            return False, str(exc)
        self.settings_changed()
        return True, message

    def close_streams(self) -> None:
        """The server stops: every event stream ends now."""
        self.closing.set()
        for hub in self.hubs.values():
            hub.wake()

    async def aclose(self) -> None:
        for hub in list(self.hubs.values()):
            await hub.aclose()
        if self.shared is not None:
            await self.shared[0].aclose()


def _shared_runs(store: Store) -> tuple[PgRelay, RunClaims] | None:
    """The relay and the run claims of a PostgreSQL store (None for any other store)."""
    import sys

    module = sys.modules.get("totem.store.postgres")  # loaded if the store is one of its
    if module is None or not isinstance(store, module.PostgresStore):
        return None
    from totem.store.pg_relay import PgRelay
    from totem.store.pg_runs import RunClaims

    return PgRelay(store.url), RunClaims(store.url)


def _usage_dict(usage: Usage) -> dict[str, int]:
    return {name: int(getattr(usage, name)) for name in Usage.__slots__}
