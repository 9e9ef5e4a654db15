"""The session service: what clients talk to. Opens sessions, runs them, relays answers.

It turns the configuration into an `Agent` (provider, model profile, tools, permission,
system prompt) and hands runs to the loop. The terminal chat, `totem run` and the web UI
are all clients of this one service.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from totem.abort import AbortSignal
from totem.config import Config, ConfigError, load_config
from totem.events import Event
from totem.loop import Agent, run_events
from totem.paths import data_dir
from totem.permission import Mode, PermissionService, Reply
from totem.prompt.builder import build_system_prompt
from totem.providers.base import Provider, ToolSpec
from totem.providers.profiles import profile_for
from totem.providers.registry import make_provider, resolve_model
from totem.questions import QuestionService
from totem.redact import Redactor
from totem.state import SessionState
from totem.store.base import SessionInfo, Store
from totem.store.sqlite import SqliteStore
from totem.tools.base import Tool

__all__ = ["SessionService", "default_store"]


def default_store() -> SqliteStore:
    return SqliteStore(data_dir() / "totem.db")


class SessionService:
    def __init__(
        self,
        root: Path,
        *,
        mode: Mode,
        config: Config | None = None,
        store: Store | None = None,
        tools: list[Tool] | None = None,
        provider: Provider | None = None,
    ) -> None:
        self.root = root.resolve()
        self.config = config if config is not None else load_config(self.root)
        self.store: Store = store if store is not None else default_store()
        self.permission = PermissionService(
            rules=self.config.rules, mode=mode, project=str(self.root), memory=self.store
        )
        self.questions = QuestionService(interactive=mode == "interactive")
        self.state = SessionState()
        self._tools = tools
        self._provider = provider  # given: used for every model (tests, demos)
        self._providers: dict[str, Provider] = {}
        self._system: str | None = None
        self._specs: list[ToolSpec] | None = None
        self._redact = Redactor.from_environment()
        for pconf in self.config.providers.values():
            if pconf.key is not None:
                self._redact.add(pconf.key.reveal())

    # sessions -------------------------------------------------------------------------------

    def open(
        self,
        *,
        session_id: str | None = None,
        continue_last: bool = False,
        model: str | None = None,
    ) -> SessionInfo:
        if session_id:
            found = self.store.get_session(session_id)
            if found is None:
                raise ConfigError(f"No session with id {session_id}.")
            return found
        if continue_last:
            latest = self.store.latest_session(str(self.root))
            if latest is None:
                raise ConfigError("There is no earlier session in this project to continue.")
            return latest
        label = model or self.config.model or ""
        return self.store.create_session(project=str(self.root), model=label)

    def model_label(self, session: SessionInfo, model: str | None) -> str:
        return model or session.model or self.config.model or ""

    # runs -----------------------------------------------------------------------------------

    def agent(self, spec: str) -> Agent:
        if self._provider is not None:
            provider, model, label = self._provider, spec, spec
        else:
            pconf, model = resolve_model(self.config, spec or None)
            label = f"{pconf.name}/{model}"
            if pconf.name not in self._providers:
                self._providers[pconf.name] = make_provider(pconf)
            provider = self._providers[pconf.name]
        if self._tools is None:
            from totem.tools.registry import builtin_tools

            self._tools = builtin_tools()
        if self._specs is None:
            from totem.tools.lazy import specs_for

            self._specs = specs_for(self._tools)
        if self._system is None:
            self._system = build_system_prompt(self.root)
        return Agent(
            provider=provider,
            model=model,
            label=label,
            profile=profile_for(model),
            tools=self._tools,
            store=self.store,
            root=self.root,
            permission=self.permission,
            system=self._system,
            settings=self.config.tools,
            max_steps=self.config.max_steps,
            redact=self._redact,
            specs=self._specs,
            questions=self.questions,
            state=self.state,
        )

    def run(
        self,
        session: SessionInfo,
        text: str,
        *,
        abort: AbortSignal,
        model: str | None = None,
        max_steps: int | None = None,
    ) -> AsyncIterator[Event]:
        agent = self.agent(self.model_label(session, model))
        if max_steps is not None:
            agent.max_steps = max_steps
        if not session.title:
            session.title = text.strip().splitlines()[0][:80] if text.strip() else ""
            self.store.set_title(session.id, session.title)
        return run_events(agent, session.id, text, abort=abort)

    def reply(self, request_id: str, reply: Reply) -> bool:
        return self.permission.reply(request_id, reply)

    def answer(self, request_id: str, answer: str | None) -> bool:
        return self.questions.reply(request_id, answer)

    async def aclose(self) -> None:
        await self.state.aclose()
        for provider in self._providers.values():
            await provider.aclose()
        self._providers.clear()
