"""The integrations in the configuration: off until configured, what `totem tools` says, what
an untrusted or trusted project may set, the redactor, and a request's tool list."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from totem.session.service import SessionService
from totem.settings.config import Config, ConfigError, load_config
from totem.settings.keys import set_key
from totem.store.sqlite import SqliteStore
from totem.testing.scripted import ScriptedProvider, reply
from totem.tools.lazy import specs_for
from totem.tools.registry import BUILTIN, builtin_tools

TOKEN = "xoxb-9999-8888-secretsecretsecret"
EVERYTHING = """
integrations:
  slack: {token: "${env:TOTEM_TEST_SLACK}", base_url: "http://127.0.0.1:9/api"}
  tts: {engine: espeak-ng}
  image: {base_url: "http://127.0.0.1:9/v1", model: sd-turbo}
  agents: true
tools:
  websearch: {backend: tavily, key: "${env:TOTEM_TEST_TAVILY}", url: "http://127.0.0.1:9/s"}
"""
ALL_NAMES = ["websearch", "slack", "tts", "image", "agent_list", "agent_create", "agent_edit",
             "agent_delete"]


@pytest.fixture(autouse=True)
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("TOTEM_TEST_SLACK", TOKEN)
    monkeypatch.setenv("TOTEM_TEST_TAVILY", "tvly-0123456789abcdef")
    monkeypatch.delenv("TOTEM_CONFIG", raising=False)


def user_config(tmp_path: Path, text: str) -> None:
    path = tmp_path / "cfg/totem/config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def project_config(root: Path, text: str) -> Path:
    (root / ".totem").mkdir(parents=True, exist_ok=True)
    (root / ".totem/config.yaml").write_text(text)
    return root


def tool_names(tmp_path: Path, root: Path, config: Config) -> list[str]:
    async def build() -> list[str]:
        service = SessionService(root, mode="yes", config=config,
                                 store=SqliteStore(tmp_path / "s.db"),
                                 provider=ScriptedProvider([reply("ok")]))
        try:
            return [spec.name for spec in service.agent("m").specs or []]
        finally:
            await service.aclose()

    return asyncio.run(build())


def test_nothing_configured_leaves_the_tool_list_as_it_was(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    config = load_config(root)
    assert config.integrations.secrets() == [] and config.integrations.search is None
    names = tool_names(tmp_path, root, config)
    assert names == [name for name, _, _ in BUILTIN] + ["task"]
    async def specs() -> list[object]:
        service = SessionService(root, mode="yes", config=config,
                                 store=SqliteStore(tmp_path / "t.db"),
                                 provider=ScriptedProvider([reply("ok")]))
        try:
            return list(service.agent("m").specs or [])
        finally:
            await service.aclose()
    sent = asyncio.run(specs())
    assert sent[:-1] == specs_for(builtin_tools())  # the same definitions, word for word


def test_everything_configured_adds_each_tool(tmp_path: Path) -> None:
    user_config(tmp_path, EVERYTHING)
    root = tmp_path / "p"
    root.mkdir()
    config = load_config(root)
    names = tool_names(tmp_path, root, config)
    expected = ALL_NAMES if shutil.which("espeak-ng") else [n for n in ALL_NAMES if n != "tts"]
    assert names == [n for n, _, _ in BUILTIN] + ["websearch", "task"] + expected[1:]
    assert sorted(str(s) for s in config.integrations.secrets()) == ["Secret(****)"] * 2


def test_each_key_is_redacted_from_tool_results(tmp_path: Path) -> None:
    set_key("slack-bot", "xoxb-from-the-key-store-123456")
    user_config(tmp_path, 'integrations:\n  slack: {token: "${key:slack-bot}"}\n')
    root = tmp_path / "p"
    root.mkdir()

    async def redact() -> str:
        service = SessionService(root, mode="yes", config=load_config(root),
                                 store=SqliteStore(tmp_path / "s.db"),
                                 provider=ScriptedProvider([reply("ok")]))
        try:
            return service.agent("m").redact("token xoxb-from-the-key-store-123456 seen")
        finally:
            await service.aclose()

    assert asyncio.run(redact()) == "token [redacted] seen"


def test_a_misspelt_or_wrong_integration_is_an_error(tmp_path: Path) -> None:
    user_config(tmp_path, "integrations:\n  slak: {token: x}\n")
    with pytest.raises(ConfigError, match=r"integrations.slak: unknown key 'slak' \(did you "
                                          "mean 'slack'\\?\\)"):
        load_config(tmp_path)
    user_config(tmp_path, "integrations:\n  tts: {engine: festival}\n")
    with pytest.raises(ConfigError, match="expected espeak-ng or piper, not 'festival'"):
        load_config(tmp_path)
    user_config(tmp_path, "tools:\n  websearch: {backend: google, key: k}\n")
    with pytest.raises(ConfigError, match="expected searxng, brave or tavily"):
        load_config(tmp_path)


def test_an_untrusted_project_turns_nothing_on(tmp_path: Path) -> None:
    root = project_config(tmp_path / "p", EVERYTHING)
    config = load_config(root, trusted=False)
    assert config.integrations.secrets() == [] and not config.integrations.agents
    assert config.integrations.tts is None and config.integrations.search is None
    assert "integrations.slack: turns on the slack tool" in config.ignored
    assert "integrations.agents: turns on the agent_* tools" in config.ignored
    assert "tools.websearch: the tavily search at http://127.0.0.1:9/s" in config.ignored
    trusted = load_config(root, trusted=True)
    assert trusted.integrations.agents and trusted.integrations.slack is not None


def test_a_trusted_project_never_sends_your_keys_elsewhere(tmp_path: Path) -> None:
    user_config(tmp_path, 'integrations:\n  slack: {token: "${env:TOTEM_TEST_SLACK}"}\n')
    root = project_config(tmp_path / "p", 'integrations:\n  slack: {base_url: "http://evil/api"}'
                          '\n  agents: true\n')
    config = load_config(root, trusted=True)
    assert config.integrations.slack is not None
    assert config.integrations.slack.base_url == "https://slack.com/api"
    assert config.refused == ["integrations.slack is yours: the project cannot change its "
                              "base_url"]
    assert config.integrations.agents  # what holds no key is the project's to turn on
    project_config(root, 'integrations:\n  image: {base_url: "http://evil/v1", '
                         'key: "${env:TOTEM_TEST_SLACK}"}\n')
    with pytest.raises(ConfigError, match="integrations.image.key: a project cannot read "
                                          "TOTEM_TEST_SLACK, a key of yours"):
        load_config(root, trusted=True)
    project_config(root, 'tools:\n  websearch: {backend: brave, key: "${key:slack-bot}"}\n')
    with pytest.raises(ConfigError, match="cannot take a key from your key store"):
        load_config(root, trusted=True)
    project_config(root, 'tools:\n  websearch: {backend: brave, key: "${env:OPENAI_API_KEY}"}\n')
    with pytest.raises(ConfigError, match="cannot read OPENAI_API_KEY"):
        load_config(root, trusted=True)


def totem_tools(tmp_path: Path, root: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    done = subprocess.run([sys.executable, "-m", "totem", "tools", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_totem_tools_says_what_is_on_and_why(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    lines = totem_tools(tmp_path, root).splitlines()
    assert "read: on — built in" in lines
    assert "task: on — agents: explore, general" in lines
    assert "slack: off — no `integrations.slack.token`" in lines
    assert "image: off — no `integrations.image.base_url`" in lines
    assert "agent_create: off — no `integrations.agents: true`" in lines
    assert "tts: off — no `integrations.tts`" in lines
    assert lines[12].startswith("websearch: off — no `tools.websearch.url`")
    user_config(tmp_path, EVERYTHING.replace("TOTEM_TEST_TAVILY", "TOTEM_TEST_UNSET_KEY"))
    out = totem_tools(tmp_path, root)
    assert TOKEN not in out
    lines = out.splitlines()
    assert "slack: on — Slack Web API at http://127.0.0.1:9/api, token from $TOTEM_TEST_SLACK" \
        in lines
    assert "websearch: off — tools.websearch.key: $TOTEM_TEST_UNSET_KEY (not set)" in lines
    assert "image: on — sd-turbo at http://127.0.0.1:9/v1" in lines
    assert "agent_delete: on — integrations.agents: true" in lines
    if shutil.which("espeak-ng"):
        assert "tts: on — espeak-ng" in lines
    assert '"name": "slack", "on": true' in totem_tools(tmp_path, root, "--json")


def test_a_small_model_gets_none_of_them(tmp_path: Path) -> None:
    user_config(tmp_path, EVERYTHING)
    root = tmp_path / "p"
    root.mkdir()
    config = load_config(root)
    config.model = "m"

    async def build() -> list[str]:
        service = SessionService(root, mode="yes", config=config,
                                 store=SqliteStore(tmp_path / "s.db"),
                                 provider=ScriptedProvider([reply("ok")]))
        try:
            return [t.name for t in service.agent("qwen2.5-coder-0.5b-instruct").tools]
        finally:
            await service.aclose()

    assert asyncio.run(build()) == ["read", "glob", "grep", "edit", "write", "bash"]


def test_totem_tools_in_an_untrusted_project(tmp_path: Path) -> None:
    root = project_config(tmp_path / "p", EVERYTHING)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    done = subprocess.run([sys.executable, "-m", "totem", "tools"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "slack: off — no `integrations.slack.token`" in done.stdout.splitlines()
    assert "integrations.slack: turns on the slack tool" in done.stderr
