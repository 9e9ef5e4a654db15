"""Helpers for the knowledge tests: project folders, the stand-in documentation server, and
runs of the real session service with a scripted model.

    STANDIN                       tests/knowledge/forge_standin.py (stdio, Python MCP SDK)
    standin_spec(log, delay=0)    its `mcpServers` entry, logging every call to `log`
    declare_forge(root, spec)     the project's .totem/mcp.json declaring it as `forge` (trusted)
    Ran = run_session(root, prompts, turns, mode=...)    events, requests, stored messages
    calls(log)                    the stand-in's calls, in order
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from totem.abort import AbortSignal
from totem.events import Event, Notice
from totem.knowledge import Pack
from totem.knowledge.session import ProjectKnowledge
from totem.messages import Message
from totem.policy.permission import Mode, Rule
from totem.providers.base import ModelRequest
from totem.session.service import SessionService
from totem.settings.config import Config, KnowledgeSettings
from totem.store.sqlite import SqliteStore
from totem.testing.scripted import ScriptedProvider, Turn

STANDIN = Path(__file__).resolve().parents[1] / "knowledge/forge_standin.py"


def standin_spec(log: Path, *, delay: float = 0.0) -> dict[str, Any]:
    env = {"FORGE_LOG": str(log), "FORGE_DELAY": str(delay)}
    return {"command": sys.executable, "args": [str(STANDIN)], "env": env}


def declare_forge(root: Path, spec: dict[str, Any]) -> None:
    (root / ".totem").mkdir(parents=True, exist_ok=True)
    (root / ".totem" / "mcp.json").write_text(json.dumps({"mcpServers": {"forge": spec}}))
    from totem.settings.trust import remember

    remember(root)  # the project's own servers count only in a trusted folder


def calls(log: Path) -> list[dict[str, Any]]:
    if not log.is_file():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


@dataclass
class Ran:
    events: list[list[Event]] = field(default_factory=list)  # per prompt
    requests: list[ModelRequest] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)

    def notices(self, index: int = -1) -> list[str]:
        return [e.text for e in self.events[index] if isinstance(e, Notice)]


def run_session(
    tmp: Path,
    root: Path,
    prompts: list[str],
    turns: Sequence[Turn],
    *,
    mode: Mode = "yes",
    knowledge: KnowledgeSettings | None = None,
    rules: list[Rule] | None = None,
    pack: Pack | None = None,
) -> Ran:
    """Each prompt as a run of one session of the real service, with a scripted model;
    `pack` in place of the one detected (e.g. with another built-in documentation server)."""
    provider = ScriptedProvider(turns)
    config = Config(model="m", knowledge=knowledge or KnowledgeSettings(), rules=rules or [])
    store = SqliteStore(tmp / "store.db")
    ran = Ran()

    async def go() -> None:
        service = SessionService(root, mode=mode, config=config, store=store, provider=provider)
        if pack is not None:
            service.knowledge = ProjectKnowledge(root, config.knowledge, store=store, pack=pack)
        try:
            session = service.open()
            for prompt in prompts:
                events = [e async for e in service.run(session, prompt, abort=AbortSignal())]
                ran.events.append(events)
            ran.messages = store.messages(session.id)
        finally:
            await service.aclose()

    asyncio.run(go())
    ran.requests = provider.requests
    store.close()
    return ran
