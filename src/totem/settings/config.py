"""Configuration (YAML), merged from three places, the later winning:

    ~/.config/totem/config.yaml     (XDG_CONFIG_HOME) for every project
    <project>/.totem/config.yaml    for this project
    $TOTEM_CONFIG                   a file named by the environment

    model: local/qwen2.5-coder          # provider/model used when --model is not given
    maxsteps: 50
    providers:
      local: {kind: openai, base_url: "http://127.0.0.1:8080/v1"}
      cloud: {kind: openai, base_url: "https://...", key: "${env:CLOUD_KEY}"}
    permission:                          # a list of rules, or a mapping permission -> action
      - {permission: bash, pattern: "git status*", action: allow}
      edit: {"*": ask, "docs/**": allow}  # (mapping form)
    detect: {ports: {ollama: 11434, llamacpp: 8080}}   # where to look when none is set up
    tools:
      bash: {timeout: 120, forbidden: ["rm -rf /*", "git push *"]}
      websearch: {url: "http://127.0.0.1:8888"}   # a SearXNG instance; no url, no tool
                                                  # (or backend: brave | tavily, key: ...)
    hooks:                   # your commands on the agent's events (totem.hooks)
      pre_tool: [{matcher: bash, command: "~/bin/check.sh", timeout: 60}]
    snapshots: {keep_days: 30, max_store_mb: 2048, max_file_mb: 20}  # what undo can put
                             # back of commands' changes (settings/snapshots.py); false: none
    sandbox: workspace-write # bash and process: read-only | workspace-write | off, or
                             # {mode, network: [host:port], hidden: [...], processes: N}
    integrations:            # slack, tts, image, agents: see settings/integrations.py
    lsp:                     # language servers whose diagnostics follow an edit:
      go: {command: [gopls], extensions: [.go]}   # see settings/lsp.py (python, typescript
                                                  # built in; `lsp: false` for none)
    knowledge:               # framework packs (Total.js built in)
      totaljs: auto          # auto | always | never: which projects are Total.js ones
      forge: true            # the Total.js documentation server and the search before a run
      forgepages: 2          # documentation pages put into the system prompt
      forgechars: 4000       # characters kept of each page
      conventions: true      # the conventions skill and the check after write/edit/patch

The knowledge settings were once top-level keys; written there they still count, with a
notice (`Config.notices`) saying where they belong now.

Keys are `Secret`s: resolved from `${env:VAR}` when used, masked in every repr.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from totem.settings.config_trust import rule_items
from totem.settings.errors import ConfigError
from totem.settings.hooks import HookSpec, parse_hooks
from totem.settings.integrations import Integrations, parse_integrations
from totem.settings.lsp import LspSettings, parse_lsp
from totem.settings.paths import cache_dir, config_dir
from totem.settings.rules import Action, Rule
from totem.settings.sandbox import SandboxSettings
from totem.settings.secret import Secret
from totem.settings.snapshots import parse_snapshots
from totem.settings.tools import ToolSettings

__all__ = ["Config", "ConfigError", "KnowledgeSettings", "ProviderConfig", "Secret", "load_config",
           "read_config_file"]

_LITERAL_KEY = re.compile(r"""(?:^|[{,])\s*key\s*:\s*(?!["']?\$\{)\S""", re.M)
# A store address with its password written in clear (`postgresql://me:secret@host/db`).
_CLEAR_PASSWORD = re.compile(r"^\s*store\s*:.*://[^/@\s:]*:(?![\"']?\$\{)[^@\s]+@", re.M)


@dataclass(slots=True)
class ProviderConfig:
    name: str
    kind: str
    base_url: str = ""
    key: Secret | None = None
    options: dict[str, Any] = field(default_factory=dict)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    origin: Literal["user", "project"] = "user"  # project: defined by a trusted project


@dataclass(slots=True)
class KnowledgeSettings:
    """Framework knowledge (`totem.knowledge`): which projects get it, and its switches."""

    totaljs: str = "auto"  # auto | always | never
    forge: bool = True
    forgepages: int = 2
    forgechars: int = 4000
    conventions: bool = True


@dataclass(slots=True)
class Config:
    model: str | None = None
    providers: dict[str, ProviderConfig] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    max_steps: int = 50
    tools: ToolSettings = field(default_factory=ToolSettings)
    detect_ports: dict[str, int] | None = None  # where to look for local servers
    knowledge: KnowledgeSettings = field(default_factory=KnowledgeSettings)
    integrations: Integrations = field(default_factory=Integrations)  # off until configured
    # language servers after edits: load_config gives the built-in ones; a Config made in
    # code (tests, embedding) starts no program unless it says so
    lsp: LspSettings = field(default_factory=LspSettings)
    sources: list[Path] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # what the untrusted project would change
    refused: list[str] = field(default_factory=list)  # what a project may never change
    notices: list[str] = field(default_factory=list)  # said once at the start of a run
    hooks: list[HookSpec] = field(default_factory=list)  # the person's (totem.hooks)


def _read_yaml(path: Path) -> dict[str, Any]:
    """The file's settings. A parsed copy is kept as JSON in the cache, keyed by the file's
    text, so a start with an unchanged config does not import PyYAML (~15 ms here)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from None
    digest = hashlib.sha256(text.encode()).hexdigest()[:32]
    cached = cache_dir() / "config" / f"{digest}.json"
    try:
        data: Any = json.loads(cached.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = _parse_yaml(path, text)
        # a key or a password written in clear is not copied anywhere
        if not _LITERAL_KEY.search(text) and not _CLEAR_PASSWORD.search(text):
            with contextlib.suppress(OSError, TypeError, ValueError):
                cached.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                cached.write_text(json.dumps(data), encoding="utf-8")
                cached.chmod(0o600)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of settings")
    from totem.settings.config_schema import config_problems

    problems = config_problems(data)
    if problems:
        raise ConfigError("\n".join(f"{path}: {problem}" for problem in problems))
    return data


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings of one config file, checked against the schema (ConfigError if not)."""
    return _read_yaml(path)


def _parse_yaml(path: Path, text: str) -> Any:
    import yaml  # deferred: only for a config file not seen before

    try:
        return yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: cannot be read as YAML: {exc}") from None


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if key == "permission":
            out[key] = [*base.get(key, []), *rule_items(value)]
        elif key == "hooks" and isinstance(value, dict):  # each file's hooks add to the last
            hooks = dict(out.get(key) or {})
            for event, items in value.items():
                hooks[event] = [*(hooks.get(event) or []), *(items or [])]
            out[key] = hooks
        elif key == "sandbox":
            from totem.settings.sandbox import merge_sandbox

            out[key] = merge_sandbox(base.get(key), value)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _rules(items: list[dict[str, Any]]) -> list[Rule]:
    rules: list[Rule] = []
    for item in items:
        action = item.get("action")
        if action not in ("allow", "ask", "deny"):
            raise ConfigError(f"permission rule {item}: action must be allow, ask or deny")
        checked: Action = action
        rules.append(Rule(str(item.get("permission", "*")), str(item.get("pattern", "*")), checked))
    return rules


def _provider(name: str, spec: Any) -> ProviderConfig:
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ConfigError(f"provider '{name}': needs at least a kind (e.g. kind: openai)")
    key = spec.get("key")
    return ProviderConfig(
        name=name,
        kind=str(spec["kind"]),
        base_url=str(spec.get("base_url", "")).rstrip("/"),
        key=Secret(str(key)) if key else None,
        options=dict(spec.get("options") or {}),
        models=dict(spec.get("models") or {}),
    )


def _tool_settings(spec: dict[str, Any]) -> ToolSettings:
    settings = ToolSettings()
    bash = spec.get("bash") or {}
    if "timeout" in bash:
        settings.bash_timeout = float(bash["timeout"])
    if "forbidden" in bash:
        settings.forbidden_commands = [str(p) for p in bash["forbidden"]]
    websearch = spec.get("websearch") or {}
    if websearch.get("url") and websearch.get("backend", "searxng") == "searxng":
        settings.websearch_url = str(websearch["url"])
    if "output_limit" in spec:
        settings.output_limit = int(spec["output_limit"])
    if "mcp_schema_budget" in spec:
        settings.mcp_schema_budget = max(0, int(spec["mcp_schema_budget"]))
    return settings


def _sandbox(value: Any) -> SandboxSettings:
    from totem.settings.sandbox import SandboxConfigError, parse_sandbox

    try:
        return parse_sandbox(value)
    except SandboxConfigError as exc:
        raise ConfigError(str(exc)) from None


def _ports(spec: Any) -> dict[str, int] | None:
    if not spec:
        return None
    if not isinstance(spec, dict):
        raise ConfigError("detect.ports: expected a mapping such as {llamacpp: 8080}")
    return {str(name): int(port) for name, port in spec.items()}


KNOWLEDGE_KEYS = ("totaljs", "forge", "forgepages", "forgechars", "conventions")


def _knowledge_section(merged: dict[str, Any], notices: list[str]) -> dict[str, Any]:
    """The `knowledge:` section, with the old top-level keys under it (and a notice)."""
    section = merged.get("knowledge") or {}
    if not isinstance(section, dict):
        raise ConfigError("knowledge: expected a mapping such as {totaljs: auto, forge: true}")
    old = [key for key in KNOWLEDGE_KEYS if key in merged]
    if old:
        notices.append(f"The setting{'s' if len(old) > 1 else ''} {', '.join(old)} now "
                       f"belong{'' if len(old) > 1 else 's'} under `knowledge:` in the "
                       "configuration; the top-level form still works for now.")
    return {**{key: merged[key] for key in old}, **section}


def _knowledge(merged: dict[str, Any]) -> KnowledgeSettings:
    mode = merged.get("totaljs", "auto")
    if isinstance(mode, bool):  # YAML reads `totaljs: yes` or `no` as a boolean
        mode = "always" if mode else "never"
    if mode not in ("auto", "always", "never"):
        raise ConfigError(f"totaljs: expected auto, always or never, not {mode!r}")
    counts: dict[str, int] = {}
    for key, default in (("forgepages", 2), ("forgechars", 4000)):
        value = merged.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"{key}: expected a whole number of 0 or more, not {value!r}")
        counts[key] = value
    return KnowledgeSettings(
        totaljs=str(mode),
        forge=bool(merged.get("forge", True)),
        forgepages=counts["forgepages"],
        forgechars=counts["forgechars"],
        conventions=bool(merged.get("conventions", True)),
    )


def config_files(project: Path) -> list[Path]:
    files = [config_dir() / "config.yaml", project / ".totem" / "config.yaml"]
    if os.environ.get("TOTEM_CONFIG"):
        files.append(Path(os.environ["TOTEM_CONFIG"]))
    return files


@dataclass(slots=True)
class _Layers:
    """The merged settings, and what the project's file may not change."""

    merged: dict[str, Any]
    sources: list[Path]
    ignored: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    project_providers: set[str] = field(default_factory=set)


def _layers(project: Path, trusted: bool | None) -> _Layers:
    from totem.settings.config_trust import (
        guard_user_providers,
        protected_variables,
        restrict_untrusted,
    )
    from totem.settings.integration_trust import guard_user_integrations

    user_file, project_file, *extra = config_files(project)
    read = {p: _read_yaml(p) for p in (user_file, project_file, *extra) if p.is_file()}
    user: dict[str, Any] = {}
    for path in (user_file, *extra):
        user = _merge(user, read.get(path, {}))
    layers = _Layers({}, list(read))
    ours = _marked_hooks(read.get(project_file, {}))
    if ours and not (trusted if trusted is not None else _trusted(project)):
        ours, layers.ignored = restrict_untrusted(ours, user)
    try:
        ours, layers.refused = guard_user_providers(ours, user)
        ours, refused = guard_user_integrations(
            ours, user, protected=protected_variables(user.get("providers") or {}))
        layers.refused += refused
    except ConfigError as exc:
        raise ConfigError(f"{project_file}: {exc}") from None
    if "store" in ours:
        ours = {k: v for k, v in ours.items() if k != "store"}
        layers.refused.append("store: where sessions are kept is yours to choose")
    mine = user.get("providers") or {}
    layers.project_providers = {n for n in ours.get("providers") or {} if n not in mine}
    merged = _merge(_merge({}, read.get(user_file, {})), ours)
    for path in extra:
        merged = _merge(merged, read.get(path, {}))
    layers.merged = merged
    return layers


def _marked_hooks(project: dict[str, Any]) -> dict[str, Any]:
    """The project file's settings, each of its hooks marked as the project's."""
    hooks = project.get("hooks")
    if not isinstance(hooks, dict):
        return project
    marked = {event: [{**item, "_source": "project"} for item in items or []]
              for event, items in hooks.items()}
    return {**project, "hooks": marked}


def _trusted(project: Path) -> bool:
    from totem.settings.trust import is_trusted

    return is_trusted(project)


def load_config(project: Path, *, trusted: bool | None = None) -> Config:
    """The settings for `project`. Its own config file counts only as far as trust allows:
    `trusted` None looks the folder up in the trust store (totem.settings.trust)."""
    layers = _layers(project, trusted)
    merged = layers.merged
    providers = {n: _provider(n, s) for n, s in (merged.get("providers") or {}).items()}
    for name in layers.project_providers & set(providers):
        providers[name].origin = "project"
    max_steps = merged.get("maxsteps", 50)
    if max_steps < 1:
        raise ConfigError(f"maxsteps: expected a whole number of at least 1, not {max_steps}")
    notices: list[str] = []
    knowledge = _knowledge(_knowledge_section(merged, notices))
    tools = _tool_settings(merged.get("tools") or {})
    tools.sandbox = _sandbox(merged.get("sandbox"))
    tools.snapshots = parse_snapshots(merged.get("snapshots"))
    return Config(
        model=merged.get("model"),
        providers=providers,
        rules=_rules(merged.get("permission", [])),
        max_steps=int(max_steps),
        tools=tools,
        detect_ports=_ports((merged.get("detect") or {}).get("ports")),
        knowledge=knowledge,
        integrations=parse_integrations(merged.get("integrations") or {},
                                        (merged.get("tools") or {}).get("websearch") or {}),
        lsp=parse_lsp(merged.get("lsp")),
        sources=layers.sources,
        ignored=layers.ignored,
        refused=layers.refused,
        notices=notices,
        hooks=parse_hooks(merged.get("hooks")),
    )
