"""What a project's `.totem/config.yaml` may set: before its folder is trusted, and ever.

Untrusted, a project may only narrow: its deny and ask rules apply, a lower step limit, a
shorter bash timeout, more forbidden commands, a smaller output limit, a narrower sandbox
(never off, never the network), the framework knowledge switches (prompt text), and
language servers turned off (`lsp`: a server's command is a program it would run).
Everything else it says is listed and ignored: its hooks (commands run on the agent's
events) among them.

Trusted or not, a project never changes where a provider of the user's config sends its key
(its kind, base_url, key, headers...), and a provider the project defines never takes a key
of the user's: not from the key store, not a variable that one of the user's providers reads.
"""

from __future__ import annotations

import re
from typing import Any

from totem.settings.errors import ConfigError

__all__ = [
    "IMPLICIT_KEY_KINDS",
    "guard_user_providers",
    "protected_variables",
    "restrict_untrusted",
    "rule_items",
]

# options of a provider that choose where requests go or how they are signed
_ROUTING_OPTIONS = frozenset({"headers", "region", "profile", "control_url", "script"})
# kinds whose adapter falls back to a well-known variable (or AWS credentials) without a key
IMPLICIT_KEY_KINDS = frozenset({"anthropic", "gemini", "bedrock"})
_WELL_KNOWN_KEYS = frozenset({
    "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
    "AWS_BEARER_TOKEN_BEDROCK", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID",
    "AWS_SESSION_TOKEN", "OPENROUTER_API_KEY", "MISTRAL_API_KEY", "GROQ_API_KEY",
    "DEEPSEEK_API_KEY", "XAI_API_KEY", "TOGETHER_API_KEY", "FIREWORKS_API_KEY",
})
_ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
_DEFAULTS = {"maxsteps": 50, "bash_timeout": 120.0, "output_limit": 30_000}
_KNOWLEDGE = ("totaljs", "forge", "forgepages", "forgechars", "conventions", "knowledge")


def _rule_text(rule: dict[str, Any]) -> str:
    return f"{rule.get('permission', '*')} {rule.get('pattern', '*')}"


def rule_items(value: Any) -> list[dict[str, Any]]:
    """Permission rules as a list of mappings, from either form (a list, or a mapping
    permission -> action or permission -> {pattern: action})."""
    if isinstance(value, list):
        return [dict(v) for v in value]
    if isinstance(value, dict):
        items: list[dict[str, Any]] = []
        for permission, spec in value.items():
            patterns = spec if isinstance(spec, dict) else {"*": spec}
            for pattern, action in patterns.items():
                items.append({"permission": permission, "pattern": pattern, "action": action})
        return items
    raise ConfigError("permission: expected a list of rules or a mapping")


def _narrower(value: Any, limit: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value <= limit


def _untrusted_tools(
    tools: dict[str, Any], user_tools: dict[str, Any], ignored: list[str]
) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    bash, user_bash = tools.get("bash") or {}, user_tools.get("bash") or {}
    kept_bash: dict[str, Any] = {}
    if "timeout" in bash:
        if _narrower(bash["timeout"], user_bash.get("timeout", _DEFAULTS["bash_timeout"])):
            kept_bash["timeout"] = bash["timeout"]
        else:
            ignored.append(f"tools.bash.timeout: {bash['timeout']} (longer than yours)")
    if "forbidden" in bash:
        mine = [str(p) for p in user_bash.get("forbidden") or []]
        theirs = [str(p) for p in bash["forbidden"] or []]
        dropped = [p for p in mine if p not in theirs]
        if dropped:
            ignored.append(f"tools.bash.forbidden: would no longer forbid {', '.join(dropped)}")
        kept_bash["forbidden"] = list(dict.fromkeys([*mine, *theirs]))
    if kept_bash:
        kept["bash"] = kept_bash
    if "output_limit" in tools:
        limit = user_tools.get("output_limit", _DEFAULTS["output_limit"])
        if _narrower(tools["output_limit"], limit):
            kept["output_limit"] = tools["output_limit"]
        else:
            ignored.append(f"tools.output_limit: {tools['output_limit']} (larger than yours)")
    websearch = tools.get("websearch") or {}
    if websearch.get("url") or websearch.get("backend") or websearch.get("key"):
        url = websearch.get("url")
        ignored.append(f"tools.websearch: the {websearch.get('backend') or 'searxng'} search"
                       + (f" at {url}" if url else ""))
    return kept


def restrict_untrusted(
    project: dict[str, Any], user: dict[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """What an untrusted project's config keeps (it only narrows), and what it would change,
    one line per item, for the question and the notice."""
    kept: dict[str, Any] = {k: project[k] for k in _KNOWLEDGE if k in project}
    ignored: list[str] = []
    if "permission" in project:
        rules = rule_items(project["permission"])
        kept["permission"] = [r for r in rules if r.get("action") != "allow"]
        ignored += [f"allow rule: {_rule_text(r)}" for r in rules if r.get("action") == "allow"]
    if "maxsteps" in project:
        if _narrower(project["maxsteps"], user.get("maxsteps", _DEFAULTS["maxsteps"])):
            kept["maxsteps"] = project["maxsteps"]
        else:
            ignored.append(f"maxsteps: {project['maxsteps']}")
    if project.get("model"):
        ignored.append(f"model: {project['model']}")
    for name, spec in (project.get("providers") or {}).items():
        what = "changes your provider" if name in (user.get("providers") or {}) else "defines"
        url = spec.get("base_url") if isinstance(spec, dict) else None
        ignored.append(f"provider '{name}' ({what}{f', base_url {url}' if url else ''})")
    if (project.get("detect") or {}).get("ports"):
        ignored.append("detect.ports: where to look for model servers")
    kept_tools = _untrusted_tools(project.get("tools") or {}, user.get("tools") or {}, ignored)
    if kept_tools:
        kept["tools"] = kept_tools
    if "sandbox" in project:
        from totem.settings.sandbox import SandboxConfigError, narrow_untrusted

        try:
            sandbox, said = narrow_untrusted(project["sandbox"], user.get("sandbox"))
        except SandboxConfigError as exc:
            raise ConfigError(str(exc)) from None
        if sandbox:
            kept["sandbox"] = sandbox
        ignored += said
    for name in project.get("mcp") or {}:
        ignored.append(f"MCP server '{name}'")
    for event, hooks in (project.get("hooks") or {}).items():
        for hook in hooks or []:
            ignored.append(f"{event} hook: {hook.get('command', '')}")
    _untrusted_lsp(project, kept, ignored)
    for name, spec in (project.get("integrations") or {}).items():
        if spec not in (None, False, {}):
            tools = "agent_* tools" if name == "agents" else f"{name} tool"
            ignored.append(f"integrations.{name}: turns on the {tools}")
    return kept, ignored


def _untrusted_lsp(project: dict[str, Any], kept: dict[str, Any], ignored: list[str]) -> None:
    """An untrusted project may turn language servers off, never name one to run."""
    section = project.get("lsp")
    if section is None:
        return
    if section is False:
        kept["lsp"] = False
        return
    off: dict[str, Any] = {}
    for name, spec in (section if isinstance(section, dict) else {}).items():
        if spec is False or (isinstance(spec, dict) and spec.get("enabled") is False):
            off[name] = {"enabled": False}
        elif isinstance(spec, dict) and ("command" in spec or "extensions" in spec
                                                 or "roots" in spec):
            command = spec.get("command")
            shown = " ".join(map(str, command)) if isinstance(command, list) else command
            ignored.append(f"lsp.{name}: runs the language server "
                           f"{shown or '(built in)'} for its files")
    if off:
        kept["lsp"] = off


def protected_variables(user_providers: dict[str, Any]) -> set[str]:
    names = set(_WELL_KNOWN_KEYS)
    for spec in user_providers.values():
        if isinstance(spec, dict) and spec.get("key"):
            names.update(_ENV_REF.findall(str(spec["key"])))
    return names


def _project_provider(name: str, spec: Any, protected: set[str]) -> str | None:
    """Why a provider the project defines cannot be used; None when it can."""
    key = str(spec.get("key") or "") if isinstance(spec, dict) else ""
    if "${key:" in key:
        return f"provider '{name}': a project's provider cannot take a key from your key store"
    taken = sorted(set(_ENV_REF.findall(key)) & protected)
    if taken:
        return (f"provider '{name}': a project's provider cannot read {', '.join(taken)}, "
                "a key of your providers")
    return None


def guard_user_providers(
    project: dict[str, Any], user: dict[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """The project's config without what it may never do to providers, and what was dropped.

    A provider the user defines keeps its kind, URL, key and routing options; the project may
    only add models and other options. A project's own provider that would take the user's
    keys is a ConfigError.
    """
    providers = project.get("providers")
    if not isinstance(providers, dict):
        return project, []
    mine = user.get("providers") or {}
    protected = protected_variables(mine)
    kept: dict[str, Any] = {}
    refused: list[str] = []
    for name, spec in providers.items():
        if name not in mine:
            reason = _project_provider(name, spec, protected)
            if reason is not None:
                raise ConfigError(reason)
            kept[name] = spec
            continue
        spec = spec if isinstance(spec, dict) else {}
        options = spec.get("options") or {}
        blocked = [k for k in ("kind", "base_url", "key") if k in spec]
        blocked += [f"options.{k}" for k in options if k in _ROUTING_OPTIONS]
        if blocked:
            refused.append(f"provider '{name}' is yours: the project cannot change its "
                           f"{', '.join(blocked)}")
        entry = {k: v for k, v in spec.items() if k == "models"}
        safe = {k: v for k, v in options.items() if k not in _ROUTING_OPTIONS}
        if safe:
            entry["options"] = safe
        if entry:
            kept[name] = entry
    return {**project, "providers": kept}, refused
