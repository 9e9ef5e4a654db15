"""Config merging and secrets, permission rules and replies, the store (SQLite and
PostgreSQL)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from totem.events import Event, PermissionAsked
from totem.messages import Message, TextPart, ToolPart
from totem.policy.permission import PermissionDenied, PermissionService, Reply, Rule, evaluate
from totem.providers.registry import make_provider, resolve_model
from totem.settings.config import ConfigError, Secret, load_config
from totem.store.location import open_store


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_config_merges_user_project_and_env_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    write(tmp_path / "xdg/totem/config.yaml",
          "model: a/one\nproviders:\n  a: {kind: openai, base_url: 'http://x/v1/'}\n"
          "permission:\n  - {permission: bash, pattern: '*', action: deny}\n")
    project = tmp_path / "proj"
    write(project / ".totem/config.yaml",
          "maxsteps: 7\npermission:\n  bash: {'git *': allow}\n")
    extra = write(tmp_path / "extra.yaml",
                  "model: b/two\nproviders:\n  b: {kind: openai, base_url: 'http://y/v1', "
                  "key: '${env:B_KEY}'}\ntools:\n  bash: {forbidden: ['rm -rf *']}\n")
    monkeypatch.setenv("TOTEM_CONFIG", str(extra))
    config = load_config(project, trusted=True)
    assert config.model == "b/two" and config.max_steps == 7
    assert set(config.providers) == {"a", "b"}
    assert config.providers["a"].base_url == "http://x/v1"
    assert config.tools.forbidden_commands == ["rm -rf *"]
    assert evaluate(config.rules, "bash", "git status") == "allow"
    assert evaluate(config.rules, "bash", "ls") == "deny"
    pconf, model = resolve_model(config, None)
    assert (pconf.name, model) == ("b", "two")
    monkeypatch.delenv("B_KEY", raising=False)
    with pytest.raises(ConfigError, match="B_KEY"):
        make_provider(pconf)


def test_secret_never_shows_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-very-secret")
    secret = Secret("${env:MY_KEY}")
    assert secret.reveal() == "sk-very-secret"
    assert "sk-" not in repr(secret) and "sk-" not in str(secret) and "sk-" not in f"{[secret]}"


def test_missing_model_config_says_how_to_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "none"))
    monkeypatch.delenv("TOTEM_CONFIG", raising=False)
    with pytest.raises(ConfigError, match="kind: openai"):
        resolve_model(load_config(tmp_path), None)


def test_last_matching_rule_wins() -> None:
    rules = [Rule("*", "*", "ask"), Rule("edit", "*", "allow"), Rule("edit", "secret/*", "deny")]
    assert evaluate(rules, "edit", "src/a.py") == "allow"
    assert evaluate(rules, "edit", "secret/key") == "deny"
    assert evaluate(rules, "bash", "ls") == "ask"


def test_replies_once_always_reject(new_store_location: Callable[[], str]) -> None:
    store = open_store(new_store_location())
    asked: list[Event] = []
    service = PermissionService(rules=[], mode="interactive", project="p", memory=store,
                                emit=asked.append)

    async def scenario() -> list[str]:
        results: list[str] = []
        for reply in (Reply("once"), Reply("reject", "use the other file"), Reply("always")):
            task = asyncio.create_task(
                service.ask(tool="edit", permission="edit", patterns=["a.py"], title="edit a.py")
            )
            await asyncio.sleep(0)
            event = asked[-1]
            assert isinstance(event, PermissionAsked)
            service.reply(event.request_id, reply)
            try:
                await task
                results.append("allowed")
            except PermissionDenied as exc:
                results.append(exc.message)
        before = len(asked)
        await service.ask(tool="edit", permission="edit", patterns=["a.py"], title="again")
        results.append("no question" if len(asked) == before else "asked again")
        return results

    results = asyncio.run(scenario())
    assert results[0] == "allowed" and results[2] == "allowed"
    assert "rejected" in results[1] and "use the other file" in results[1]
    assert results[3] == "no question"
    # "always" is remembered for the project, across services
    again = PermissionService(rules=[], mode="headless", project="p", memory=store)
    asyncio.run(again.ask(tool="edit", permission="edit", patterns=["a.py"], title="x"))
    store.close()


def test_store_keeps_parts_as_they_change(new_store_location: Callable[[], str]) -> None:
    location = new_store_location()
    store = open_store(location)
    info = store.create_session(project="/p", model="m")
    msg = Message(id="msg_1", session_id=info.id, role="assistant")
    store.add_message(msg)
    part = ToolPart(call_id="c1", name="bash", raw_input='{"command": "ls"}')
    store.save_part(msg.id, 0, TextPart("hello"))
    store.save_part(msg.id, 1, part)
    part.state, part.output = "completed", "a\nb"
    store.save_part(msg.id, 1, part)
    reopened = open_store(location)
    [loaded] = reopened.messages(info.id)
    assert loaded.parts[0] == TextPart("hello")
    assert isinstance(loaded.parts[1], ToolPart) and loaded.parts[1].output == "a\nb"
    latest = reopened.latest_session("/p")
    assert latest is not None and latest.id == info.id
    store.close()
    reopened.close()


def test_parsed_config_is_cached_but_never_a_key_in_clear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "none"))
    config = write(tmp_path / "a.yaml", "model: a/m\nproviders:\n  a: {kind: openai, "
                   "base_url: 'http://x/v1', key: '${env:A_KEY}'}\n")
    monkeypatch.setenv("TOTEM_CONFIG", str(config))
    first = load_config(tmp_path)
    second = load_config(tmp_path)  # from the cached copy
    assert first.model == second.model == "a/m"
    cached = list((tmp_path / "cache" / "totem" / "config").glob("*.json"))
    assert len(cached) == 1 and "A_KEY" in cached[0].read_text()
    write(config, "providers:\n  b: {kind: openai, base_url: 'http://y/v1', key: sk-clear-123}\n")
    assert load_config(tmp_path).providers["b"].key is not None
    texts = [p.read_text() for p in (tmp_path / "cache" / "totem" / "config").glob("*.json")]
    assert not any("sk-clear" in t for t in texts)
