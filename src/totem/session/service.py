"""The session service: what clients talk to. Opens sessions, runs them, relays answers.

It turns the configuration into an `Agent` (provider, model profile, tools, permission,
system prompt) and hands runs to the loop. The terminal chat, `totem run` and the web UI
are all clients of this one service.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from totem.abort import AbortSignal
from totem.events import Event, TodoUpdated
from totem.hooks import Hooks
from totem.knowledge import conventions_hook
from totem.knowledge.session import ProjectKnowledge
from totem.messages import ImageBlock, Message, ToolPart
from totem.policy.modes import (
    MODES,
    PLAN_TOOLS,
    ModeInfo,
    SessionMode,
    mode_permission,
    plan_tools,
)
from totem.policy.permission import Mode, PermissionService, Reply
from totem.policy.questions import QuestionService
from totem.policy.redact import Redactor
from totem.prompt.builder import build_agent_prompt, build_system_prompt
from totem.providers.base import Provider, ToolSpec
from totem.providers.localserver.served import ask_soon, served_model
from totem.providers.registry import make_provider, resolve_model
from totem.run.agent import Agent
from totem.run.assist import AssistedRun, AssistFactory, RunAssist
from totem.run.compaction import output_limit_for
from totem.run.loop import run_events
from totem.session.toolset import Toolset
from totem.settings.config import Config, ConfigError, ProviderConfig, load_config
from totem.store.base import SessionInfo, Store
from totem.store.location import open_store
from totem.tools.base import Tool, ToolContext
from totem.tools.files import DiskFiles, FileAccess
from totem.tools.state import SessionState

if TYPE_CHECKING:
    from totem.agents.definitions import AgentDef
    from totem.lsp.servers import LanguageServers
    from totem.providers.catalog.catalogue import ModelInfo
    from totem.run.subagents import SubagentRunner
    from totem.settings.snapshots import SnapshotSettings
    from totem.smallmodel.levers import Levers
    from totem.snapshots.calls import CallSnapshots
    from totem.tools.terminal import Terminal

__all__ = ["SessionService", "default_store"]


_CACHING_KINDS = frozenset({"anthropic", "bedrock"})


def _cache_ttl(pconf: ProviderConfig | None) -> float | None:
    """Seconds a prompt-cache entry lives for this provider; None when it does not cache."""
    if pconf is None or pconf.kind not in _CACHING_KINDS or pconf.options.get("cache") is False:
        return None
    return 3600.0 if str(pconf.options.get("cache_ttl", "5m")) == "1h" else 300.0


def _present(tool: Tool | None) -> Tool:
    assert tool is not None
    return tool


def _call_snapshots(root: Path, settings: SnapshotSettings) -> CallSnapshots | None:
    """The work tree's snapshots around calls, for undo of commands' changes; None: off."""
    if not settings.enabled:
        return None
    from totem.settings.paths import data_dir
    from totem.snapshots.calls import CallSnapshots

    return CallSnapshots.for_project(root, settings, data_dir())


def default_store() -> Store:
    """The person's store: TOTEM_STORE, the user config's `store:`, or the SQLite file."""
    return open_store()


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
        self._provider = provider  # given: used for every model (tests, demos)
        self._providers: dict[str, Provider] = {}
        self._system: str | None = None
        self._specs: list[ToolSpec] | None = None
        self._small: tuple[list[Tool], list[ToolSpec], str] | None = None
        self._current: Agent | None = None
        self._lsp: LanguageServers | None = None  # the language servers, from the first edit
        self.problems: list[str] = []  # agent files and the like that could not be read
        self.notices: list[str] = list(self.config.notices)  # said at the next run's start
        self._warned: set[str] = set()
        self._said: set[str] = set()
        from totem.settings.trust import is_trusted

        self.trusted = is_trusted(self.root)  # the project's own config files count
        self.toolset = Toolset(self.root, self.config, permission=self.permission,
                               questions=self.questions, given=tools, trusted=self.trusted,
                               store=self.store)
        ignored_servers = self.toolset.mcp_config.ignored if self.toolset.mcp_config else []
        if self.toolset.mcp_config is not None and not self.toolset.mcp_config.servers \
                and not self.toolset.mcp_config.problems:
            self.toolset.mcp_config = None
        self._trust_notice(ignored_servers)
        self.knowledge = ProjectKnowledge(self.root, self.config.knowledge, store=self.store)
        self.snapshots = _call_snapshots(self.root, self.config.tools.snapshots)
        # Where the tools read, write and run commands: here, unless a client such as an
        # editor over ACP gives its own buffers and terminal (totem.acp).
        self.files: FileAccess = DiskFiles()
        self.terminal: Terminal | None = None
        self._redact = Redactor.from_environment()
        self.hooks = Hooks(self.config.hooks, root=self.root)  # the person's (totem.hooks)
        self._modes: dict[str, SessionMode] = {}  # each session's mode, when not the default
        for pconf in self.config.providers.values():
            if pconf.key is not None:
                self._redact.add(pconf.key.reveal())
        for secret in self.config.integrations.secrets():
            self._redact.add(secret.reveal())

    def _trust_notice(self, ignored_servers: list[str]) -> None:
        """One notice for what the untrusted project's config would change, one for what a
        project may never change."""
        from totem.session.trust_items import agent_settings, refused_notice, untrusted_notice

        ignored = [*self.config.ignored, *ignored_servers]
        if not self.trusted:
            ignored += agent_settings(self.root)
        for text in (untrusted_notice(ignored), refused_notice(self.config.refused)):
            if text:
                self.notices.append(text)

    async def prepare(self) -> None:
        """With no provider configured, use a model server found on this computer."""
        if self.config.providers or self._provider is not None:
            return
        from totem.providers.catalog.detect import detect
        from totem.settings.config import ProviderConfig

        for found in await detect(ports=self.config.detect_ports):
            if found.needs_key or not found.models:
                continue
            self.config.providers[found.name] = ProviderConfig(
                name=found.name, kind=found.kind, base_url=found.base_url
            )
            self.config.model = self.config.model or f"{found.name}/{found.models[0]}"
            self.notices.append(
                f"No provider is configured: using {found.name} at {found.base_url} "
                f"({self.config.model}), found running on this computer."
            )
            return

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
        """The conversation's agent for the model `spec` ("provider/model")."""
        pconf: ProviderConfig | None = None
        if self._provider is not None:
            provider, model, label = self._provider, spec, spec
        else:
            pconf, model = resolve_model(self.config, spec or None)
            ask_soon(pconf, model)  # the server's round trip overlaps the prompt's building
            label = f"{pconf.name}/{model}"
            if pconf.name not in self._providers:
                self._providers[pconf.name] = make_provider(pconf)
            provider = self._providers[pconf.name]
        tools = self.tools()
        if self._specs is None:
            from totem.tools.lazy import specs_for

            self._specs = specs_for(tools)
        served = served_model(pconf, model)
        profile = served.profile
        if profile.small:
            tools, specs, system = self._small_surface(tools, self._specs)
        else:
            if self._system is None:
                self._system = build_system_prompt(
                    self.root, knowledge=self.knowledge.primer(),
                    hidden_skills=self.knowledge.hidden_skills(),
                )
            specs, system = self._specs, self._system
        info = self._model_info(label, model)
        window = (self._window(label, model)
                  or (served.facts.context_window if served.facts else None)
                  or info.context_window or profile.context_window)
        settings = self.config.tools
        limit = output_limit_for(settings.output_limit, window)
        if limit != settings.output_limit:
            settings = dataclasses.replace(settings, output_limit=limit)
        agent = Agent(
            provider=provider,
            model=model,
            label=label,
            profile=profile,
            tools=tools,
            store=self.store,
            root=self.root,
            permission=self.permission,
            system=system,
            settings=settings,
            max_steps=self.config.max_steps,
            redact=self._redact,
            specs=specs,
            questions=self.questions,
            context_window=window,
            sampling=served.sampling,
            assist=(_small_assist(look_ahead=served.read_ahead, levers=served.levers)
                    if profile.small else None),
            state=self.state,
            price=info.price,
            cache_ttl=_cache_ttl(self.config.providers.get(label.partition("/")[0])),
            after_write=[conventions_hook(lambda: self.config.knowledge), _python_check,
                         self._diagnostics],
            hooks=self.hooks,
            files=self.files,
            terminal=self.terminal,
            snapshots=self.snapshots,
        )
        if self.toolset.mcp_config is not None:
            agent.preparers.append(functools.partial(self.toolset.mcp_tools, agent))
            agent.refreshers.append(self.toolset.mcp_changes)
        self._current = agent
        return agent

    def _small_surface(
        self, tools: list[Tool], specs: list[ToolSpec]
    ) -> tuple[list[Tool], list[ToolSpec], str]:
        """What a small model is given: a few tools with short texts, a short prompt."""
        if self._small is None:
            from totem.smallmodel.surface import small_specs, small_system_prompt, small_tools

            kept = small_tools(tools)
            by_name = {s.name: s for s in specs}
            self._small = (
                kept,
                small_specs([by_name[t.name] for t in kept]),
                small_system_prompt(self.root, knowledge=self.knowledge.primer()
                                    if self._evident_framework() else ""),
            )
        return self._small

    def _evident_framework(self) -> bool:
        """Whether the project itself declares the framework: a small model gets no primer
        and no documentation search for a folder the pack only claims because it is new."""
        from totem.knowledge.totaljs.detect import is_new_folder

        return self.knowledge.active and (
            self.config.knowledge.totaljs == "always" or not is_new_folder(self.root)
        )

    def _knowledge_for(self, agent: Agent) -> bool:
        return self._evident_framework() if agent.profile.small else self.knowledge.active

    def _model_info(self, label: str, model: str) -> ModelInfo:
        from totem.providers.catalog.catalogue import model_info

        return model_info(self.config.providers.get(label.partition("/")[0]), model)

    def _window(self, label: str, model: str) -> int | None:
        pconf = self.config.providers.get(label.partition("/")[0])
        info = pconf.models.get(model, {}) if pconf is not None else {}
        value = info.get("context") or info.get("context_window")
        return int(value) if value else None

    def tools(self) -> list[Tool]:
        """The tools known before a run (see `session.toolset`)."""
        agents = self.agent_definitions()
        return self.toolset.base(agents={n: d.description for n, d in agents.items()},
                                 task_runner=self._subagent_runner)

    def agent_definitions(self) -> dict[str, AgentDef]:
        from totem.agents.load import load_agents

        problems: list[str] = []
        found = load_agents(self.root, self.store, problems=problems)
        self.problems.extend(p for p in problems if p not in self.problems)
        if not self.trusted:  # a project's agent may not pick a model or more steps
            found = {name: dataclasses.replace(d, model=None, max_steps=None)
                     if d.source == "file" else d for name, d in found.items()}
        return found

    def _subagent_runner(self) -> SubagentRunner:
        from totem.run.subagents import SubagentRunner

        def current() -> Agent:
            assert self._current is not None, "a sub-agent runs within a run"
            return self._current

        return SubagentRunner(
            parent=current,
            make_agent=self.agent_for_subagent,
            definitions=lambda: dict(self.agent_definitions()),
            system_for=lambda d: build_agent_prompt(
                self.root, d.prompt, skills=d.tools is None or "skill" in d.tools,
                knowledge=self.knowledge.primer(), hidden_skills=self.knowledge.hidden_skills(),
            ),
        )

    def agent_for_subagent(self, spec: str) -> Agent:
        """The agent of a sub-agent's own model; ConfigError when no provider has it (the
        runner then uses the conversation's model and says so)."""
        self._check_named_provider(spec)
        current = self._current
        made = self.agent(spec)
        self._current = current  # building a sub-agent's model does not change the run's
        return made

    def _check_named_provider(self, spec: str) -> None:
        """A model named with a provider prefix that is not configured is not sent to the
        only provider as a model name, unless that provider lists it under `models:`."""
        name, slash, _ = spec.partition("/")
        if self._provider is not None or not slash or name in self.config.providers:
            return
        if any(spec in p.models for p in self.config.providers.values()):
            return
        known = ", ".join(sorted(self.config.providers)) or "none"
        raise ConfigError(f"no provider named '{name}' is configured (providers: {known})")

    def run(
        self,
        session: SessionInfo,
        text: str,
        *,
        abort: AbortSignal,
        model: str | None = None,
        max_steps: int | None = None,
        agent_name: str | None = None,
        images: list[Path] | None = None,
        image_blocks: list[ImageBlock] | None = None,
        mode: SessionMode | None = None,
    ) -> AsyncIterator[Event]:
        """A run of `text`; the model gets a project command's prompt for `/name`, the text
        with MCP resources attached for `@server:uri`, a server's prompt for
        `/server:prompt` (session/mcp_input.py). `mode` (see `modes()`) becomes the
        session's mode; without it the session keeps the one it has."""
        from totem.session.commands import expand, load_commands
        from totem.session.mcp_input import mentions_servers, with_mcp_input

        definition = None
        if agent_name:
            definition = self.agent_definitions().get(agent_name)
            if definition is None:
                known = ", ".join(sorted(self.agent_definitions()))
                raise ConfigError(f"There is no agent named '{agent_name}'. Agents: {known}.")
            model = model or definition.model
        agent = self.agent(self.model_label(session, model))
        if definition is not None:
            agent = self._as_agent(agent, definition)
        if max_steps is not None:
            agent.max_steps = max_steps
        if mode is not None:
            self.set_mode(session.id, mode)
        agent = self._in_mode(agent, self.mode(session.id))
        blocks = self._images(agent, [*(images or []), *self._mentioned_images(text)],
                              given=image_blocks or [])
        if not session.title:
            session.title = text.strip().splitlines()[0][:80] if text.strip() else ""
            self.store.set_title(session.id, session.title)
        expansion = expand(text, load_commands(self.root)) if text.startswith("/") else None
        model_text = expansion.model_text if expansion is not None else None
        if "@" in text:
            from totem.session.mentions import with_mentions

            model_text = with_mentions(model_text or text, self.root, redact=self._redact) \
                or model_text
        self._warn_about_tools(agent)
        if self._knowledge_for(agent):  # the pages of earlier searches; a new one before step 1
            prompt = text if expansion is None else None
            base, agent.system = agent.system, agent.system + self.knowledge.pages_section()
            agent.preparers = [*agent.preparers, functools.partial(
                self._before_first_step, agent, base, prompt, session.id)]
        if agent.mode == "plan":  # an MCP server's tools, a pack's: held to plan mode too
            from totem.session.plan import in_plan_mode

            agent.preparers, agent.refreshers = in_plan_mode(agent.preparers, agent.refreshers)
        from totem.session.undo import track_changes

        resumed = bool(self.store.messages(session.id)) if self.hooks else False

        def start(given: str | None) -> AsyncIterator[Event]:
            if not self.hooks:
                return run_events(agent, session.id, text, abort=abort, model_text=given,
                                  images=blocks)
            from totem.session.hook_events import with_prompt_hooks

            return with_prompt_hooks(
                self.hooks, session_id=session.id, resumed=resumed, text=text,
                model_text=given, mode=agent.mode, label=agent.label,
                start=lambda hooked: run_events(agent, session.id, text, abort=abort,
                                                model_text=hooked, images=blocks))

        events = start(model_text)
        if expansion is None and mentions_servers(self.toolset, text):
            # MCP resources and prompts expand the text the model gets (with any @path)
            events = with_mcp_input(self.toolset, agent, model_text or text,
                                    lambda given: start(given or model_text))
        events = track_changes(events, store=self.store, session_id=session.id,
                               snapshots=agent.snapshots)
        if agent.mode == "plan":
            from totem.session.plan import with_plan

            events = with_plan(events, store=self.store, session_id=session.id)
        if self.hooks.of("notification"):
            from totem.session.hook_events import with_notification_hooks

            events = with_notification_hooks(self.hooks, events, session_id=session.id,
                                             mode=agent.mode)
        return self._with_notices(events)

    # modes ----------------------------------------------------------------------------------

    @staticmethod
    def modes() -> list[ModeInfo]:
        """The session modes a client may offer: name, title, description."""
        return list(MODES)

    def mode(self, session_id: str) -> SessionMode:
        """The session's mode (the default until one is set)."""
        return self._modes.get(session_id, "default")

    def set_mode(self, session_id: str, mode: SessionMode) -> None:
        self._modes[session_id] = mode

    def _in_mode(self, agent: Agent, mode: SessionMode) -> Agent:
        """The agent of a run in `mode`: in plan mode only reading tools are offered, the
        others refuse, and the permission layer denies all but reading (policy/modes.py)."""
        if mode == "default":
            return agent
        permission = mode_permission(agent.permission, mode)
        if mode == "accept_edits":
            return dataclasses.replace(agent, permission=permission, mode=mode)
        from totem.session.plan import plan_prompt

        return dataclasses.replace(
            agent, mode=mode, permission=permission, tools=plan_tools(agent.tools),
            specs=[s for s in agent.specs or [] if s.name in PLAN_TOOLS],
            system=f"{agent.system}\n\n{plan_prompt()}",
        )

    def approve_plan(
        self, session: SessionInfo, steps: list[str], *, abort: AbortSignal,
        model: str | None = None, mode: SessionMode = "default",
    ) -> AsyncIterator[Event]:
        """The person approved `steps` (as proposed or edited): the session leaves plan
        mode (for `mode`), the steps become its task list, and a run carries them out."""
        from totem.session.plan import approved_text
        from totem.tools.todo import TodoItem, TodoList

        steps = [step.strip() for step in steps if step.strip()]
        if not steps:
            raise ConfigError("The plan has no steps to carry out.")
        todos = self.state.service(TodoList).replace([TodoItem(content=s) for s in steps])
        events = self.run(session, approved_text(steps), abort=abort, model=model, mode=mode)
        return _after(TodoUpdated(todos), events)

    def _mentioned_images(self, text: str) -> list[Path]:
        if "@" not in text:
            return []
        from totem.session.mentions import mentioned_images

        return mentioned_images(text, self.root)

    def _images(self, agent: Agent, paths: list[Path], *,
                given: list[ImageBlock]) -> list[ImageBlock]:
        """The attached images (files, and those a client gave as data), read; ConfigError
        for a model that does not take them."""
        if not paths and not given:
            return []
        from totem.session.attachments import check_vision, load_image

        blocks = [*given, *(load_image(path) for path in paths)]
        check_vision(agent.label, agent.profile.vision)
        return blocks

    async def _before_first_step(
        self, agent: Agent, base: str, prompt: str | None, session_id: str,
        asks: Callable[[Event], None],
    ) -> list[Tool]:
        """The documentation search (after the MCP servers have started): its pages join
        the system prompt, and the documentation server's tools the run's."""
        tools = await self.knowledge.before_first_step(
            prompt,
            session_id=session_id,
            project=self.toolset.mcp,
            declared=self.toolset.mcp_config.servers if self.toolset.mcp_config else (),
            permission=self.permission,
            questions=self.questions,
            context_window=agent.context_window,
            emit=asks,
        )
        agent.system = base + self.knowledge.pages_section()
        return tools

    def _warn_about_tools(self, agent: Agent) -> None:
        from totem.providers.catalog.catalogue import tools_warning

        if agent.sampling.constrained:
            return  # its server holds every step to a valid call or an answer
        warning = tools_warning(self._model_info(agent.label, agent.model))
        if warning and warning not in self._warned:
            self._warned.add(warning)
            self.notices.append(warning)

    async def _with_notices(self, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
        """The run's events, after what the session has to say first (a model found, a
        warning about the model, agent files that could not be read)."""
        from totem.events import Notice

        pending = [*self.notices, *(p for p in self.problems if p not in self._said)]
        self._said.update(pending)
        self.notices.clear()
        first = True
        async for event in events:
            yield event
            if first:  # right after RunStarted
                first = False
                for text in pending:
                    yield Notice(text, "warning")

    def context_window(self) -> int | None:
        """Tokens the current model's window holds, when known."""
        return self._current.context_window if self._current is not None else None

    def session_cost(self, session: SessionInfo) -> float | None:
        """USD spent in the session so far, at the current model's prices."""
        from totem.providers.catalog.catalogue import cost

        agent = self._current
        if agent is None or agent.price is None:
            return None
        total = 0.0
        for message in self._with_threads(session.id):
            total += cost(message.usage, agent.price) or 0.0
        return total

    def _with_threads(self, session_id: str) -> list[Message]:
        """The session's messages, then those of the sub-agents its task calls started."""
        messages = self.store.messages(session_id)
        threads = [p.meta["session_id"] for m in messages for p in m.parts
                   if isinstance(p, ToolPart) and p.meta and p.meta.get("session_id")]
        return messages + [m for t in threads for m in self.store.messages(t)]

    async def compact(self, session: SessionInfo, *, abort: AbortSignal) -> list[Event]:
        """Summarize the session's older turns now (the chat's /compact)."""
        from totem.run.loop import Run

        events: list[Event] = []
        agent = self.agent(self.model_label(session, None))
        await Run(agent, session.id, emit=events.append, abort=abort).compact_now()
        return events

    def _as_agent(self, agent: Agent, definition: AgentDef) -> Agent:
        """The conversation run as a custom agent: its prompt, tools and step limit."""
        allowed = definition.tools
        tools = [t for t in agent.tools if allowed is None or t.name in allowed]
        agent = dataclasses.replace(
            agent,
            tools=tools,
            specs=[s for s in (agent.specs or []) if s.name in {t.name for t in tools}],
            system=build_agent_prompt(self.root, definition.prompt,
                                      skills=allowed is None or "skill" in allowed,
                                      knowledge=self.knowledge.primer(),
                                      hidden_skills=self.knowledge.hidden_skills()),
            max_steps=definition.max_steps or agent.max_steps,
        )
        self._current = agent
        return agent

    def redact(self, text: str) -> str:
        """`text` with the secrets totem knows hidden (text a client attaches to a request)."""
        return self._redact(text)

    async def _diagnostics(self, ctx: ToolContext, path: Path) -> str:
        """The after-write hook of the language servers (totem.lsp), started on the first
        change of a file that one of them checks: nothing is imported before that."""
        if self.config.lsp.for_suffix(path.suffix) is None:
            return ""
        if self._lsp is None:
            from totem.lsp.servers import LanguageServers

            self._lsp = LanguageServers(self.root, self.config.lsp)
        return await self._lsp.after_write(ctx, path)

    def reply(self, request_id: str, reply: Reply) -> bool:
        return self.permission.reply(request_id, reply)

    def answer(self, request_id: str, answer: str | None) -> bool:
        return self.questions.reply(request_id, answer)

    async def aclose(self) -> None:
        if self._lsp is not None:
            await self._lsp.aclose()
            self._lsp = None
        await self.toolset.aclose()
        await self.knowledge.aclose()
        await self.state.aclose()
        for provider in self._providers.values():
            await provider.aclose()
        self._providers.clear()


def _small_assist(*, look_ahead: bool, levers: Levers) -> AssistFactory:
    """What a small model's run gets beyond the loop (smallmodel/), made once per run."""

    def make(run: AssistedRun) -> RunAssist:
        from totem.smallmodel.assist import SmallModelAssist

        return SmallModelAssist(run, look_ahead=look_ahead, levers=levers)

    return make


async def _after(first: Event, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
    """`events`, with `first` right after the run's start."""
    started = False
    async for event in events:
        yield event
        if not started:
            started = True
            yield first


def _python_check(ctx: ToolContext, path: Path) -> str:
    """tools/python_check, imported when a file is first written (not at start-up)."""
    from totem.tools.python_check import python_check

    return python_check(ctx, path)
