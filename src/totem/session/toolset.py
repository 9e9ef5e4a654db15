"""The one place a run's tools are assembled.

    built in     read, glob, grep, write, edit, patch, bash, process, fetch, todo, ask, skill
    websearch    when a search backend is configured (SearXNG, Brave, Tavily)
    task         when there are agents to start (sub-agents)
    integrations slack, tts, image, agent_*: each when configured (session.integrations)
    mcp          the configured MCP servers' tools, which start with the first run
    pack         a knowledge pack's documentation server, after its search before step 1

The first four are known before a run and make the agent's tool list; the last two come
into being with a run, as the agent's preparers (in that order: the pack's search may use a
project server that the MCP step started). Each tool is marked by its kind
(`tools.base.kind_of`), never recognised by its name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from totem.events import Event
from totem.tools.base import Tool

if TYPE_CHECKING:
    from totem.mcp.config import McpConfig
    from totem.mcp.manager import McpManager
    from totem.policy.permission import PermissionService
    from totem.policy.questions import QuestionService
    from totem.run.agent import Agent, ToolChange
    from totem.run.subagents import SubagentRunner
    from totem.session.integrations import ToolState
    from totem.settings.config import Config
    from totem.store.base import Store

__all__ = ["Toolset"]


class Toolset:
    def __init__(
        self,
        root: Path,
        config: Config,
        *,
        permission: PermissionService,
        questions: QuestionService,
        given: list[Tool] | None = None,
        trusted: bool = True,
        store: Store | None = None,
    ) -> None:
        self.root = root
        self.store = store  # where the agent tools keep saved agents
        self.config = config
        self.permission = permission
        self.questions = questions
        self._base = given  # given: used as they are (tests, demos)
        self.mcp_config: McpConfig | None = None
        from totem.mcp import configured

        if configured(root):
            from totem.mcp.config import load_mcp_config

            self.mcp_config = load_mcp_config(root, trusted=trusted)
        self.mcp: McpManager | None = None

    def base(
        self, *, agents: dict[str, str], task_runner: Callable[[], SubagentRunner]
    ) -> list[Tool]:
        """The tools known before a run: built in, web search when configured, and `task`
        when there are `agents` (name: description) to start."""
        if self._base is None:
            from totem.session.integrations import integration_tools
            from totem.tools.registry import builtin_tools

            tools = builtin_tools()
            extra = integration_tools(self.config.integrations, store=lambda: self.store)
            tools += [t for t in extra if t.name == "websearch"]
            if agents:
                tools.append(_task_tool(agents, task_runner))
            tools += [t for t in extra if t.name != "websearch"]
            self._base = tools
        return self._base

    def states(self, *, agents: dict[str, str]) -> list[ToolState]:
        """Every tool a run could have, on or off, and why (for `totem tools`)."""
        from totem.session.integrations import ToolState, integration_states
        from totem.tools.registry import BUILTIN

        found = [ToolState(name, True, "built in") for name, _, _ in BUILTIN]
        extra = integration_states(self.config.integrations)
        found += [s for s in extra if s.name == "websearch"]
        found.append(ToolState("task", bool(agents), f"agents: {', '.join(sorted(agents))}"
                               if agents else "no agents to start"))
        found += [s for s in extra if s.name != "websearch"]
        if self.mcp_config is not None:
            servers = ", ".join(self.mcp_config.enabled) or "none enabled"
            found.append(ToolState("mcp", bool(self.mcp_config.enabled),
                                   f"servers: {servers} (their tools start with a run)"))
        return found

    async def mcp_tools(self, agent: Agent, asks: Callable[[Event], None]) -> list[Tool]:
        """The MCP servers' tools; the servers start (each asking first) on the first run.
        What the servers ask or say goes to the run in progress (`asks`)."""
        assert self.mcp_config is not None
        if self.mcp is None:
            from totem.mcp.manager import McpManager
            from totem.mcp.sampling import ProviderSampler

            self.mcp = McpManager(
                self.root,
                self.mcp_config,
                permission=self.permission,
                questions=self.questions,
                sampler=ProviderSampler(agent.provider, agent.model, label=agent.label),
                context_window=agent.context_window,
                schema_budget=self.config.tools.mcp_schema_budget,
            )
        self.mcp.attach(asks)
        await self.mcp.start()
        return self.mcp.tools

    async def mcp_changes(self) -> ToolChange | None:
        """Between steps: the MCP tools again, when a server changed its list, came back
        with other tools, or was disabled."""
        if self.mcp is None:
            return None
        before = frozenset(t.name for t in self.mcp.tools)
        if not await self.mcp.refresh():
            return None
        from totem.run.agent import ToolChange

        return ToolChange(removed=before, added=list(self.mcp.tools))

    async def aclose(self) -> None:
        if self.mcp is not None:
            await self.mcp.aclose()
            self.mcp = None


def _task_tool(agents: dict[str, str], runner: Callable[[], SubagentRunner]) -> Tool:
    from totem.run.subagents import describe
    from totem.tools.lazy import LazyTool

    def build() -> Tool:
        from totem.tools.task import Task

        return Task(runner(), agents)

    return LazyTool("task", False, "totem.tools.task:Task", factory=build,
                    description=describe(agents), parallel=True, kind="task")
