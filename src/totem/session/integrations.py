"""The integrations' tools: which are on for a configuration, and why each is on or off.

    websearch   tools.websearch: a SearXNG url, or backend brave | tavily with a key
    slack       integrations.slack.token
    tts         integrations.tts (espeak-ng, or Piper with a model), the engine installed
    image       integrations.image.base_url
    agent_*     integrations.agents: true

`integration_tools` gives the tools that are on, each loading when first used (nothing here
imports httpx or pydantic); `integration_states` says the same for `totem tools`.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from totem.settings.integrations import Integrations
from totem.tools.base import Tool, ToolKind

if TYPE_CHECKING:
    from totem.settings.secret import Secret
    from totem.store.base import Store

__all__ = ["AGENT_TOOLS", "ToolState", "integration_states", "integration_tools"]

AGENT_TOOLS = (("agent_list", True, "AgentList"), ("agent_create", False, "AgentCreate"),
               ("agent_edit", False, "AgentEdit"), ("agent_delete", False, "AgentDelete"))
_BACKEND_NAMES = {"searxng": "SearXNG", "brave": "Brave Search API", "tavily": "Tavily"}


@dataclass(frozen=True, slots=True)
class ToolState:
    """One tool for `totem tools`: whether the model is offered it, and why (or why not)."""

    name: str
    on: bool
    why: str


def _key_missing(secret: Secret | None, where: str) -> str | None:
    """Why a configured key cannot be used (a variable not set...); None when it can."""
    if secret is None or secret.reveal():
        return None
    return f"{where}: {secret.source()}"


def _search(found: Integrations) -> ToolState:
    search = found.search
    if search is None:
        return ToolState("websearch", False, "no `tools.websearch.url` (SearXNG), nor "
                         "`tools.websearch.backend: brave | tavily` with a key")
    missing = _key_missing(search.key, "tools.websearch.key")
    if missing:
        return ToolState("websearch", False, missing)
    return ToolState("websearch", True, f"{_BACKEND_NAMES[search.backend]} at {search.url}")


def _slack(found: Integrations) -> ToolState:
    if found.slack is None:
        return ToolState("slack", False, "no `integrations.slack.token`")
    missing = _key_missing(found.slack.token, "integrations.slack.token")
    if missing:
        return ToolState("slack", False, missing)
    source = found.slack.token.source()
    where = "the key store" if source == "stored" else source
    return ToolState("slack", True, f"Slack Web API at {found.slack.base_url}, token from "
                     f"{where}")


def _tts(found: Integrations) -> ToolState:
    tts = found.tts
    if tts is None:
        return ToolState("tts", False, "no `integrations.tts`")
    program = "piper" if tts.engine == "piper" else "espeak-ng"
    if shutil.which(program) is None:
        return ToolState("tts", False, f"{program} is not installed (not on PATH)")
    if tts.model is not None and not Path(tts.model).expanduser().is_file():
        return ToolState("tts", False, f"integrations.tts.model: no file {tts.model}")
    return ToolState("tts", True, program + (f", voice {tts.voice}" if tts.voice else ""))


def _image(found: Integrations) -> ToolState:
    image = found.image
    if image is None:
        return ToolState("image", False, "no `integrations.image.base_url`")
    missing = _key_missing(image.key, "integrations.image.key")
    if missing:
        return ToolState("image", False, missing)
    return ToolState("image", True, f"{image.model} at {image.base_url}")


def _agents(found: Integrations) -> list[ToolState]:
    why = "integrations.agents: true" if found.agents else "no `integrations.agents: true`"
    return [ToolState(name, found.agents, why) for name, _, _ in AGENT_TOOLS]


def integration_states(found: Integrations) -> list[ToolState]:
    """Every integration's tools, on or off, with the reason."""
    return [_search(found), _slack(found), _tts(found), _image(found), *_agents(found)]


def integration_tools(found: Integrations, *, store: Callable[[], Store | None]) -> list[Tool]:
    """The tools of the integrations that are on, in `integration_states`' order."""
    from totem.tools.lazy import LazyTool

    on = {state.name for state in integration_states(found) if state.on}
    tools: list[Tool] = []

    def add(name: str, read_only: bool, target: str, build: Callable[[], Tool]) -> None:
        if name in on:
            kind: ToolKind = "websearch" if name == "websearch" else "integration"
            tools.append(LazyTool(name, read_only, target, factory=build, kind=kind))

    add("websearch", True, "totem.tools.websearch:WebSearch", lambda: _websearch(found))
    add("slack", False, "totem.tools.slack:Slack", lambda: _slack_tool(found))
    add("tts", False, "totem.tools.tts:Speak", lambda: _tts_tool(found))
    add("image", False, "totem.tools.image:ImageTool", lambda: _image_tool(found))
    for name, read_only, cls in AGENT_TOOLS:
        add(name, read_only, f"totem.tools.agent_tools:{cls}",
            lambda cls=cls: _agent_tool(cls, store))  # type: ignore[misc]
    return tools


def _websearch(found: Integrations) -> Tool:
    from totem.tools.websearch import WebSearch

    assert found.search is not None
    return WebSearch(found.search)


def _slack_tool(found: Integrations) -> Tool:
    from totem.tools.slack import Slack

    assert found.slack is not None
    return Slack(found.slack)


def _tts_tool(found: Integrations) -> Tool:
    from totem.tools.tts import Speak

    assert found.tts is not None
    return Speak(found.tts)


def _image_tool(found: Integrations) -> Tool:
    from totem.tools.image import ImageTool

    assert found.image is not None
    return ImageTool(found.image)


def _agent_tool(cls: str, store: Callable[[], Store | None]) -> Tool:
    from totem.tools import agent_tools

    made: Tool = getattr(agent_tools, cls)(store)
    return made
