"""MCP servers as configuration: `.totem/mcp.json` in the project, `mcp:` in the YAML config.

    .totem/mcp.json                          (the shape other agents use too)
    {"mcpServers": {
       "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"],
                      "env": {"TOKEN": "${env:MY_TOKEN}"}, "cwd": "tools"},
       "docs": {"type": "http", "url": "https://example.org/mcp",
                "headers": {"Authorization": "Bearer ${env:DOCS_TOKEN}"}},
       "old": {"type": "sse", "url": "http://127.0.0.1:9000/sse", "enabled": false}}}

    config.yaml (user or project)            mcp:
                                               everything: {command: npx, args: [...]}

Optional per server: `timeout` (seconds for one tool call, default 300), `startup_timeout`
(default 30), `protocol` (`legacy`: the 2025-11-25 handshake, the default, which keeps
server→client requests such as elicitation working; `auto`; or a version such as
`2026-07-28`), `enabled`. A project's `.totem/mcp.json` replaces a server of the same name
from the YAML config. Values of `env` and `headers` may be `${env:VAR}`; they are secrets and
never shown. Reading this file imports nothing of the MCP SDK.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

from totem.mcp.presence import MCP_SECTION
from totem.settings.config import ConfigError, Secret

__all__ = [
    "DEFAULT_STARTUP_TIMEOUT",
    "DEFAULT_TOOL_TIMEOUT",
    "HttpServer",
    "IdentityProvider",
    "McpConfig",
    "OAuthSettings",
    "ServerConfig",
    "StdioServer",
    "describe_server",
    "load_mcp_config",
    "tool_name",
]

DEFAULT_TOOL_TIMEOUT = 300.0
DEFAULT_STARTUP_TIMEOUT = 30.0
PROTOCOLS = ("legacy", "auto", "2026-07-28")
_NAME_OK = re.compile(r"[^A-Za-z0-9_-]")
MAX_TOOL_NAME = 64  # what OpenAI and Anthropic accept
GRANTS = ("authorization_code", "client_credentials", "cross_app_access")
Grant: TypeAlias = Literal["authorization_code", "client_credentials", "cross_app_access"]


@dataclass(frozen=True, slots=True)
class StdioServer:
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, Secret] = field(default_factory=dict)
    cwd: str | None = None
    timeout: float = DEFAULT_TOOL_TIMEOUT
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    protocol: str = "legacy"
    enabled: bool = True
    source: str = ""
    kind: Literal["stdio"] = "stdio"


@dataclass(frozen=True, slots=True)
class IdentityProvider:
    """The company's identity provider in a cross-app-access sign-in: where the person's ID
    token is exchanged for a grant to the MCP server. The ID token is `id_token`
    (`${key:...}` or `${env:...}`), or what `id_token_command` prints, run at each exchange
    (ID tokens live an hour or so; the provider's own command line tool renews them)."""

    token_endpoint: str
    client_id: str  # totem's client at the identity provider
    id_token: Secret | None = None
    id_token_command: tuple[str, ...] = ()
    client_secret: Secret | None = None


@dataclass(frozen=True, slots=True)
class OAuthSettings:
    """How totem signs in to an HTTP server that asks for OAuth (on its first 401): by
    dynamic client registration, or with a client id registered beforehand."""

    enabled: bool = True
    client_id: str | None = None
    client_secret: Secret | None = None
    scope: str | None = None
    client_metadata_url: str | None = None  # an https URL used as the client id (CIMD)
    callback_port: int | None = None  # the loopback redirect's port; None: a free one
    # client_credentials: no person signs in; the client authenticates with its secret, or
    # with a JWT signed by `private_key` (a PEM, from ${env:...}) with `signing_algorithm`
    grant: Grant = "authorization_code"
    private_key: Secret | None = None
    signing_algorithm: str = "ES256"
    # cross_app_access: the person's ID token from `idp` is exchanged there for a grant that
    # the MCP server's authorization server (`issuer`; None: the one the server names)
    # trades, with client_id and client_secret, for an access token
    issuer: str | None = None
    idp: IdentityProvider | None = None


@dataclass(frozen=True, slots=True)
class HttpServer:
    name: str
    url: str
    headers: Mapping[str, Secret] = field(default_factory=dict)
    transport: Literal["http", "sse"] = "http"
    oauth: OAuthSettings = field(default_factory=OAuthSettings)
    timeout: float = DEFAULT_TOOL_TIMEOUT
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    protocol: str = "legacy"
    enabled: bool = True
    source: str = ""
    kind: Literal["http"] = "http"


ServerConfig: TypeAlias = StdioServer | HttpServer


@dataclass(slots=True)
class McpConfig:
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # shown as notices; never fatal
    ignored: list[str] = field(default_factory=list)  # servers of an untrusted project

    @property
    def enabled(self) -> dict[str, ServerConfig]:
        return {name: s for name, s in self.servers.items() if s.enabled}


def tool_name(server: str, tool: str) -> str:
    """`server__tool` in the characters providers accept, at most 64 of them."""
    name = f"{_NAME_OK.sub('_', server)}__{_NAME_OK.sub('_', tool)}"
    if len(name) <= MAX_TOOL_NAME:
        return name
    import hashlib

    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_TOOL_NAME - 9]}_{digest}"


def _strip_userinfo(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, path = rest.partition("/")
    return f"{scheme}://{authority.rpartition('@')[2]}{slash}{path}"


def describe_server(server: ServerConfig) -> str:
    """What starting the server does, for the question and `totem mcp list`: the command
    line, or the URL it connects to. Secrets (env values, headers) are never included."""
    if isinstance(server, StdioServer):
        text = shlex.join([server.command, *server.args])
        if server.cwd:
            text += f"  (in {server.cwd})"
        if server.env:
            text += f"  (with {', '.join(sorted(server.env))} set)"
        return text
    kind = "SSE" if server.transport == "sse" else "streamable HTTP"
    return f"{_strip_userinfo(server.url)}  ({kind})"


def _secrets(name: str, key: str, value: Any) -> dict[str, Secret]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"MCP server '{name}': {key} must be a mapping of names to strings")
    return {str(k): Secret(str(v)) for k, v in value.items()}


def _number(name: str, spec: Mapping[str, Any], key: str, default: float) -> float:
    value = spec.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"MCP server '{name}': {key} must be a positive number of seconds")
    return float(value)


def _oauth(name: str, spec: Mapping[str, Any]) -> OAuthSettings:
    """`oauth: false`, `oauth: {client_id: ..., client_secret: ${env:...}, scope: ...}`, or
    nothing: on unless the configured headers already carry an Authorization."""
    value = spec.get("oauth")
    headers = spec.get("headers") or {}
    if value is None:
        given = isinstance(headers, dict) and any(k.lower() == "authorization" for k in headers)
        return OAuthSettings(enabled=not given)
    if isinstance(value, bool):
        return OAuthSettings(enabled=value)
    if not isinstance(value, dict):
        raise ConfigError(f"MCP server '{name}': oauth must be true, false or a mapping")
    port = value.get("callback_port")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int)
                             or not 0 < port < 65536):
        raise ConfigError(f"MCP server '{name}': oauth.callback_port must be a port number")
    secret, key = value.get("client_secret"), value.get("private_key")
    return OAuthSettings(
        grant=_grant(name, value),
        private_key=Secret(str(key)) if key else None,
        signing_algorithm=str(value.get("signing_algorithm", "ES256")),
        client_id=str(value["client_id"]) if value.get("client_id") else None,
        client_secret=Secret(str(secret)) if secret else None,
        scope=str(value["scope"]) if value.get("scope") else None,
        client_metadata_url=str(value["client_metadata_url"])
        if value.get("client_metadata_url") else None,
        callback_port=port,
        issuer=_url(name, "oauth.issuer", value["issuer"]) if value.get("issuer") else None,
        idp=_identity_provider(name, value["idp"]) if value.get("idp") else None,
    )


def _grant(name: str, value: Mapping[str, Any]) -> Grant:
    """The grant, checked against what it needs."""
    grant = str(value.get("grant", "authorization_code"))
    if grant not in GRANTS:
        raise ConfigError(f"MCP server '{name}': oauth.grant must be one of {', '.join(GRANTS)}")
    client, secret = value.get("client_id"), value.get("client_secret")
    if grant == "client_credentials" and not (client and (secret or value.get("private_key"))):
        raise ConfigError(f"MCP server '{name}': oauth.grant client_credentials needs a "
                          "client_id and a client_secret or a private_key")
    if grant == "cross_app_access" and not (client and secret and value.get("idp")):
        raise ConfigError(f"MCP server '{name}': oauth.grant cross_app_access needs a "
                          "client_id, a client_secret and an idp")
    return grant  # type: ignore[return-value]


def _identity_provider(name: str, value: Any) -> IdentityProvider:
    """`idp: {token_endpoint: URL, client_id: ..., id_token: ${key:...}, client_secret: ...}`,
    with `id_token_command: "..."` (or a list of words) in place of `id_token`."""
    missing = [k for k in ("token_endpoint", "client_id")
               if not (isinstance(value, dict) and value.get(k))]
    if missing:
        raise ConfigError(f"MCP server '{name}': oauth.idp needs {', '.join(missing)}")
    token, command = value.get("id_token"), value.get("id_token_command") or ()
    try:
        words = tuple(shlex.split(command) if isinstance(command, str) else map(str, command))
    except ValueError as exc:  # unbalanced quotes
        raise ConfigError(f"MCP server '{name}': oauth.idp.id_token_command: {exc}") from None
    if bool(token) == bool(words):
        raise ConfigError(f"MCP server '{name}': oauth.idp needs an id_token or an "
                          "id_token_command (one of them)")
    secret = value.get("client_secret")
    return IdentityProvider(
        token_endpoint=_url(name, "oauth.idp.token_endpoint", value["token_endpoint"]),
        client_id=str(value["client_id"]),
        id_token=Secret(str(token)) if token else None,
        id_token_command=words,
        client_secret=Secret(str(secret)) if secret else None,
    )


def _url(name: str, key: str, value: Any) -> str:
    url = str(value)
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"MCP server '{name}': {key} must start with http:// or https://")
    return url


def _server(name: str, spec: Any, source: str) -> ServerConfig:
    if not isinstance(spec, dict):
        raise ConfigError(f"MCP server '{name}': expected a mapping with a command or a url")
    kind = str(spec.get("type", spec.get("transport", ""))).lower()
    protocol = str(spec.get("protocol", "legacy"))
    if protocol not in PROTOCOLS:
        raise ConfigError(f"MCP server '{name}': protocol must be one of {', '.join(PROTOCOLS)}")
    enabled = bool(spec.get("enabled", not spec.get("disabled", False)))
    timeout = _number(name, spec, "timeout", DEFAULT_TOOL_TIMEOUT)
    startup = _number(name, spec, "startup_timeout", DEFAULT_STARTUP_TIMEOUT)
    if "url" in spec and kind in ("", "http", "streamable-http", "streamablehttp", "sse"):
        url = str(spec["url"])
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"MCP server '{name}': url must start with http:// or https://")
        return HttpServer(
            name=name,
            url=url,
            headers=_secrets(name, "headers", spec.get("headers")),
            transport="sse" if kind == "sse" else "http",
            oauth=_oauth(name, spec),
            timeout=timeout,
            startup_timeout=startup,
            protocol=protocol,
            enabled=enabled,
            source=source,
        )
    if "command" in spec and kind in ("", "stdio"):
        args = spec.get("args") or []
        if not isinstance(args, list):
            raise ConfigError(f"MCP server '{name}': args must be a list of strings")
        cwd = spec.get("cwd")
        return StdioServer(
            name=name,
            command=str(spec["command"]),
            args=tuple(str(a) for a in args),
            env=_secrets(name, "env", spec.get("env")),
            cwd=str(cwd) if cwd else None,
            timeout=timeout,
            startup_timeout=startup,
            protocol=protocol,
            enabled=enabled,
            source=source,
        )
    raise ConfigError(
        f"MCP server '{name}': needs a command (stdio) or a url (type http or sse)"
        + (f", not type '{kind}'" if kind else "")
    )


def _add(config: McpConfig, entries: Any, source: str) -> None:
    if not isinstance(entries, dict):
        config.problems.append(f"{source}: the MCP servers must be a mapping of names to servers")
        return
    for name, spec in entries.items():
        try:
            config.servers[str(name)] = _server(str(name), spec, source)
        except ConfigError as exc:
            config.servers.pop(str(name), None)
            config.problems.append(f"{source}: {exc}")


def _yaml_sections(root: Path, *, trusted: bool) -> list[tuple[str, Any]]:
    from totem.settings.config import config_files

    sections: list[tuple[str, Any]] = []
    project_file = config_files(root)[1]
    for path in config_files(root):
        if not path.is_file() or (path == project_file and not trusted):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        if not MCP_SECTION.search(text):
            continue  # yaml is not imported for a config without MCP servers
        import yaml

        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError:
            continue  # load_config reports a broken file
        if isinstance(data, dict) and data.get("mcp") is not None:
            sections.append((str(path), data["mcp"]))
    return sections


def load_mcp_config(
    root: Path,
    *,
    yaml_sections: list[tuple[str, Any]] | None = None,
    trusted: bool | None = None,
) -> McpConfig:
    """The configured servers: the `mcp:` sections of the YAML config files (in their order),
    then `<root>/.totem/mcp.json`, a later server replacing an earlier one of the same name.
    `yaml_sections` ((source, section) pairs) is read from the config files when not given.
    The project's own servers count only once its folder is trusted (`trusted` None: look it
    up); until then they are listed in `ignored`. An unknown key is a ConfigError."""
    if trusted is None:
        from totem.settings.trust import is_trusted

        trusted = is_trusted(root)
    config = McpConfig()
    sections = _yaml_sections(root, trusted=trusted) if yaml_sections is None else yaml_sections
    for source, section in sections:
        _add(config, section, source)
    path = root / ".totem" / "mcp.json"
    if path.is_file():
        entries = _mcp_json(config, path)
        if entries is not None and trusted:
            _add(config, entries, str(path))
        elif isinstance(entries, dict):
            config.ignored += [f"MCP server '{name}' ({path.name})" for name in entries]
    return config


def _mcp_json(config: McpConfig, path: Path) -> Any:
    """The servers of `.totem/mcp.json`; None (with a problem noted) when it cannot be read."""
    from totem.settings.config_schema import mcp_json_problems

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        config.problems.append(f"{path}: cannot be read as JSON: {exc}")
        return None
    if not isinstance(data, dict):
        config.problems.append(f"{path}: expected an object with mcpServers")
        return None
    problems = mcp_json_problems(data)
    if problems:
        raise ConfigError("\n".join(f"{path}: {problem}" for problem in problems))
    return data.get("mcpServers", data.get("servers", {}))


def resolve_secrets(values: Mapping[str, Secret], *, what: str) -> dict[str, str]:
    """The secrets' values; a ConfigError naming the missing environment variables."""
    resolved: dict[str, str] = {}
    missing: list[str] = []
    for key, secret in values.items():
        value = secret.reveal()
        if value is None:
            missing.extend(v for v in secret.env_vars() if v not in os.environ)
        else:
            resolved[key] = value
    if missing:
        raise ConfigError(f"{what} needs the environment variable(s) {', '.join(sorted(missing))}")
    return resolved
