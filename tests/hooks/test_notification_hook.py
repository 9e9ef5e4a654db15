"""The notification hook: a question to the person (a permission, in a terminal-like
session of the real service) also runs the person's notification hooks, a real script, while
the run waits for the answer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.support.hook_scripts import script
from totem.abort import AbortSignal
from totem.events import Event, PermissionAsked
from totem.hooks import HookSpec
from totem.policy.permission import Reply
from totem.session.service import SessionService
from totem.settings.config import Config, KnowledgeSettings, ProviderConfig
from totem.store.sqlite import SqliteStore
from totem.testing.fake_server import FakeOpenAIServer


def test_a_permission_question_runs_the_notification_hook(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    root = tmp_path / "project"
    root.mkdir()
    seen = tmp_path / "notified.json"
    hook = script(tmp_path / "notify.sh", f"cat > {seen}.part && mv {seen}.part {seen}\n")
    server = FakeOpenAIServer([{"tool": "bash", "args": {"command": "touch ran.txt"}},
                               {"text": "Made it."}], models=["m"])
    store = SqliteStore(tmp_path / "store.db")

    async def go() -> list[Event]:
        url = await server.start()
        config = Config(model="fake/m",
                        providers={"fake": ProviderConfig("fake", "openai", url)},
                        knowledge=KnowledgeSettings(totaljs="never", forge=False),
                        hooks=[HookSpec("notification", hook)])
        service = SessionService(root, mode="interactive", config=config, store=store)
        events: list[Event] = []
        try:
            session = service.open()
            async for event in service.run(session, "make ran.txt", abort=AbortSignal()):
                events.append(event)
                if isinstance(event, PermissionAsked):
                    for _ in range(500):  # the hook runs while the question waits
                        if seen.exists():
                            break
                        await asyncio.sleep(0.01)
                    service.reply(event.request_id, Reply("once"))
            return events
        finally:
            await service.aclose()
            await server.stop()

    events = asyncio.run(go())
    asked = next(e for e in events if isinstance(e, PermissionAsked))
    event = json.loads(seen.read_text())
    assert event["hook_event_name"] == "Notification"
    assert event["notification_type"] == "permission_prompt"
    assert event["message"] == f"totem needs your permission to {asked.title}"
    assert (root / "ran.txt").exists()
    store.close()
