"""MCP servers as configuration: .totem/mcp.json and `mcp:` in the YAML config."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from totem.mcp.config import (
    HttpServer,
    StdioServer,
    describe_server,
    load_mcp_config,
    resolve_secrets,
    tool_name,
)
from totem.settings.config import ConfigError, Secret


def write_json(root: Path, data: object) -> None:
    (root / ".totem").mkdir(parents=True, exist_ok=True)
    (root / ".totem" / "mcp.json").write_text(json.dumps(data))


def test_mcp_json_declares_stdio_http_and_sse_servers(tmp_path: Path) -> None:
    write_json(
        tmp_path,
        {
            "mcpServers": {
                "files": {
                    "command": "npx",
                    "args": ["-y", "server"],
                    "env": {"A": "1"},
                    "cwd": "tools",
                    "timeout": 5,
                },
                "web": {
                    "type": "http",
                    "url": "https://example.org/mcp",
                    "headers": {"Authorization": "Bearer x"},
                },
                "old": {"type": "sse", "url": "http://127.0.0.1:1/sse", "enabled": False},
            }
        },
    )
    config = load_mcp_config(tmp_path, yaml_sections=[], trusted=True)
    assert config.problems == []
    files, web, old = config.servers["files"], config.servers["web"], config.servers["old"]
    assert isinstance(files, StdioServer) and files.args == ("-y", "server")
    assert files.cwd == "tools" and files.timeout == 5.0 and files.protocol == "legacy"
    assert isinstance(web, HttpServer) and web.transport == "http"
    assert isinstance(old, HttpServer) and old.transport == "sse" and not old.enabled
    assert list(config.enabled) == ["files", "web"]


def test_a_project_server_replaces_one_of_the_same_name_from_the_yaml_config(
    tmp_path: Path,
) -> None:
    write_json(tmp_path, {"mcpServers": {"docs": {"command": "project-docs"}}})
    sections = [("user.yaml", {"docs": {"command": "user-docs"}, "other": {"command": "o"}})]
    config = load_mcp_config(tmp_path, yaml_sections=sections, trusted=True)
    docs = config.servers["docs"]
    assert isinstance(docs, StdioServer) and docs.command == "project-docs"
    assert set(config.servers) == {"docs", "other"}


def test_the_yaml_config_files_are_read_for_an_mcp_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    extra = tmp_path / "extra.yaml"
    extra.write_text("mcp:\n  notes: {url: 'http://127.0.0.1:5/mcp'}\n")
    monkeypatch.setenv("TOTEM_CONFIG", str(extra))
    config = load_mcp_config(tmp_path / "project")
    assert list(config.servers) == ["notes"]
    assert config.servers["notes"].source == str(extra)


def test_bad_entries_are_problems_not_failures(tmp_path: Path) -> None:
    write_json(
        tmp_path,
        {
            "mcpServers": {
                "good": {"command": "ok"},
                "nothing": {"env": {}},
                "weird": {"type": "carrier-pigeon", "command": "x"},
                "slow": {"command": "x", "timeout": -1},
                "ftp": {"url": "ftp://example.org"},
                "proto": {"command": "x", "protocol": "2019"},
            }
        },
    )
    config = load_mcp_config(tmp_path, yaml_sections=[], trusted=True)
    assert list(config.servers) == ["good"]
    assert len(config.problems) == 5
    assert any("needs a command (stdio) or a url" in p for p in config.problems)
    assert any("carrier-pigeon" in p for p in config.problems)
    (tmp_path / ".totem" / "mcp.json").write_text("{not json")
    broken = load_mcp_config(tmp_path, yaml_sections=[], trusted=True)
    assert broken.servers == {} and "cannot be read as JSON" in broken.problems[0]


def test_the_description_says_what_runs_and_never_shows_a_secret() -> None:
    stdio = StdioServer(
        "s", "node", ("server.js", "--flag", "a b"), env={"TOKEN": Secret("s3cret")}, cwd="sub"
    )
    assert describe_server(stdio) == "node server.js --flag 'a b'  (in sub)  (with TOKEN set)"
    web = HttpServer(
        "w", "https://user:pw@example.org/mcp", headers={"Authorization": Secret("Bearer s3cret")}
    )
    assert describe_server(web) == "https://example.org/mcp  (streamable HTTP)"
    assert "s3cret" not in repr(stdio) + repr(web)


def test_secrets_resolve_from_the_environment_or_name_what_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOTEM_TEST_TOKEN", "abc")
    monkeypatch.delenv("TOTEM_TEST_MISSING", raising=False)
    values = {"A": Secret("Bearer ${env:TOTEM_TEST_TOKEN}"), "B": Secret("plain")}
    assert resolve_secrets(values, what="it") == {"A": "Bearer abc", "B": "plain"}
    with pytest.raises(ConfigError, match="TOTEM_TEST_MISSING"):
        resolve_secrets({"C": Secret("${env:TOTEM_TEST_MISSING}")}, what="it")


def test_tool_names_are_server__tool_in_the_characters_providers_accept() -> None:
    assert tool_name("everything", "get-tiny-image") == "everything__get-tiny-image"
    assert tool_name("my server", "a.b/c") == "my_server__a_b_c"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == 64 and long != tool_name("s" * 40, "t" * 41)


def test_reading_the_configuration_does_not_load_the_mcp_sdk(tmp_path: Path) -> None:
    write_json(tmp_path, {"mcpServers": {"x": {"command": "x"}}})
    code = (
        "import sys; from pathlib import Path; import totem.mcp; "
        f"c = totem.mcp.load_mcp_config(Path({str(tmp_path)!r}), trusted=True); "
        "assert list(c.servers) == ['x']; "
        "loaded = [m for m in ('mcp', 'mcp_types', 'pydantic') if m in sys.modules]; "
        "print(loaded); assert loaded == [], loaded"
    )
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_configured_is_a_cheap_first_look(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from totem.mcp import configured

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("TOTEM_CONFIG", raising=False)
    root = tmp_path / "project"
    root.mkdir()
    assert not configured(root)
    (tmp_path / "config" / "totem").mkdir(parents=True)
    (tmp_path / "config" / "totem" / "config.yaml").write_text("model: a/b\nmcp:\n  x: {}\n")
    assert configured(root)
    (tmp_path / "config" / "totem" / "config.yaml").write_text("model: a/b\n")
    assert not configured(root)
    write_json(root, {"mcpServers": {}})
    assert configured(root)


def test_oauth_settings_of_an_http_server(tmp_path: Path) -> None:
    write_json(tmp_path, {"mcpServers": {
        "plain": {"type": "http", "url": "https://a.example/mcp"},
        "keyed": {"type": "http", "url": "https://b.example/mcp",
                  "headers": {"Authorization": "Bearer ${env:B_TOKEN}"}},
        "off": {"type": "http", "url": "https://c.example/mcp", "oauth": False},
        "registered": {"type": "http", "url": "https://d.example/mcp", "oauth": {
            "client_id": "totem-123", "client_secret": "${env:D_SECRET}", "scope": "read",
            "callback_port": 8765}},
    }})
    servers = load_mcp_config(tmp_path, trusted=True).servers
    oauth = {name: s.oauth for name, s in servers.items() if isinstance(s, HttpServer)}
    assert oauth["plain"].enabled and oauth["plain"].client_id is None
    assert not oauth["keyed"].enabled  # a configured Authorization header is the way in
    assert not oauth["off"].enabled
    registered = oauth["registered"]
    assert (registered.client_id, registered.scope, registered.callback_port) == (
        "totem-123", "read", 8765)
    assert registered.client_secret is not None and "${env:" not in repr(registered)

    write_json(tmp_path, {"mcpServers": {"bad": {"url": "https://e.example/mcp",
                                                 "oauth": {"callback_port": 99999}}}})
    config = load_mcp_config(tmp_path, trusted=True)
    assert "bad" not in config.servers
    assert any("oauth.callback_port must be a port number" in p for p in config.problems)
    write_json(tmp_path, {"mcpServers": {"typo": {"url": "https://e.example/mcp",
                                                  "oauth": {"clientid": "x"}}}})
    with pytest.raises(ConfigError, match="clientid"):
        load_mcp_config(tmp_path, trusted=True)


def test_client_credentials_need_a_client_and_a_secret_or_key(tmp_path: Path) -> None:
    write_json(tmp_path, {"mcpServers": {
        "bot": {"url": "https://a.example/mcp", "oauth": {
            "grant": "client_credentials", "client_id": "ci", "client_secret": "${env:S}"}},
        "signed": {"url": "https://b.example/mcp", "oauth": {
            "grant": "client_credentials", "client_id": "ci", "private_key": "${env:PEM}",
            "signing_algorithm": "RS256"}},
        "nokey": {"url": "https://c.example/mcp", "oauth": {
            "grant": "client_credentials", "client_id": "ci"}},
        "odd": {"url": "https://d.example/mcp", "oauth": {"grant": "password"}},
    }})
    config = load_mcp_config(tmp_path, trusted=True)
    bot, signed = config.servers["bot"], config.servers["signed"]
    assert isinstance(bot, HttpServer) and bot.oauth.grant == "client_credentials"
    assert isinstance(signed, HttpServer) and signed.oauth.signing_algorithm == "RS256"
    assert signed.oauth.private_key is not None
    assert "nokey" not in config.servers and "odd" not in config.servers
    text = "\n".join(config.problems)
    assert "needs a client_id and a client_secret or a private_key" in text
    assert "oauth.grant must be one of authorization_code, client_credentials" in text


def test_cross_app_access_needs_the_client_and_the_identity_provider(tmp_path: Path) -> None:
    idp = {"token_endpoint": "https://idp.example/token", "client_id": "totem-at-idp",
           "id_token": "${key:idp-id-token}", "client_secret": "${env:IDP_SECRET}"}
    base = {"grant": "cross_app_access", "client_id": "ci", "client_secret": "${env:S}"}
    write_json(tmp_path, {"mcpServers": {
        "tracker": {"url": "https://a.example/mcp",
                    "oauth": {**base, "issuer": "https://auth.a.example", "idp": idp}},
        "found": {"url": "https://b.example/mcp", "oauth": {**base, "idp": idp}},
        "noidp": {"url": "https://c.example/mcp", "oauth": base},
        "notoken": {"url": "https://d.example/mcp", "oauth": {
            **base, "idp": {"token_endpoint": "https://idp.example/token", "client_id": "x"}}},
        "badurl": {"url": "https://e.example/mcp", "oauth": {
            **base, "idp": {**idp, "token_endpoint": "idp.example/token"}}},
        "command": {"url": "https://g.example/mcp", "oauth": {**base, "idp": {
            "token_endpoint": "https://idp.example/token", "client_id": "x",
            "id_token_command": "idp-cli print-id-token --profile 'work laptop'"}}},
        "both": {"url": "https://h.example/mcp", "oauth": {
            **base, "idp": {**idp, "id_token_command": ["idp-cli"]}}},
        "typo": {"url": "https://f.example/mcp", "oauth": {
            **base, "idp": {**idp, "idtoken": "x"}}},
    }})
    with pytest.raises(ConfigError, match=r"idp\.idtoken"):
        load_mcp_config(tmp_path, trusted=True)  # an unknown key stops the file
    write_json(tmp_path, {"mcpServers": {k: v for k, v in json.loads(
        (tmp_path / ".totem" / "mcp.json").read_text())["mcpServers"].items() if k != "typo"}})
    config = load_mcp_config(tmp_path, trusted=True)
    tracker, found = config.servers["tracker"], config.servers["found"]
    assert isinstance(tracker, HttpServer) and tracker.oauth.grant == "cross_app_access"
    assert tracker.oauth.issuer == "https://auth.a.example"
    assert tracker.oauth.idp is not None and tracker.oauth.idp.client_id == "totem-at-idp"
    assert repr(tracker.oauth.idp.id_token) == "Secret(****)"
    assert isinstance(found, HttpServer) and found.oauth.issuer is None
    command = config.servers["command"]
    assert isinstance(command, HttpServer) and command.oauth.idp is not None
    assert command.oauth.idp.id_token_command == (
        "idp-cli", "print-id-token", "--profile", "work laptop")
    assert command.oauth.idp.id_token is None
    assert sorted(config.servers) == ["command", "found", "tracker"]
    text = "\n".join(config.problems)
    assert "cross_app_access needs a client_id, a client_secret and an idp" in text
    assert text.count("oauth.idp needs an id_token or an id_token_command (one of them)") == 2
    assert "oauth.idp.token_endpoint must start with http:// or https://" in text
