"""What a configuration file may say: every known key at every level, and the type of its value.

A key that is not known is an error naming the file, the key's path and the nearest known key
(`max_steps` -> did you mean `maxsteps`?); so is a value of the wrong type. Nothing is
silently ignored: a misspelt setting that does nothing is worse than one that stops the run.
The values themselves (an action, a protocol) are checked where they are used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = ["CONFIG_SCHEMA", "LSP_SERVER", "MCP_SERVER", "check", "config_problems",
           "mcp_json_problems"]


@dataclass(frozen=True, slots=True)
class Keys:
    """A mapping with these keys, each of its own kind."""

    fields: dict[str, Spec]


@dataclass(frozen=True, slots=True)
class MapOf:
    """A mapping of any names to values of one kind (providers by name, servers by name)."""

    value: Spec


@dataclass(frozen=True, slots=True)
class ListOf:
    item: Spec


@dataclass(frozen=True, slots=True)
class OneOf:
    """The first of these that fits; the problems of the closest when none does."""

    choices: tuple[Spec, ...]


@dataclass(frozen=True, slots=True)
class Scalar:
    """A plain value: one of `types` (bool is never taken for a number)."""

    types: tuple[type, ...]
    what: str


Spec: TypeAlias = Keys | MapOf | ListOf | OneOf | Scalar | None  # None: anything

TEXT = Scalar((str,), "text")
WHOLE = Scalar((int,), "a whole number")
NUMBER = Scalar((int, float), "a number")
FLAG = Scalar((bool,), "true or false")
TEXTS = ListOf(Scalar((str, int, float), "text"))

MCP_SERVER = Keys({
    "type": TEXT, "transport": TEXT, "command": TEXT, "args": TEXTS,
    "env": MapOf(Scalar((str, int, float, bool), "text")), "cwd": TEXT, "url": TEXT,
    "headers": MapOf(Scalar((str, int, float), "text")), "timeout": NUMBER,
    "startup_timeout": NUMBER, "protocol": TEXT, "enabled": FLAG, "disabled": FLAG,
    "oauth": OneOf((FLAG, Keys({
        "client_id": TEXT, "client_secret": TEXT, "scope": TEXT, "client_metadata_url": TEXT,
        "callback_port": WHOLE, "grant": TEXT, "private_key": TEXT, "signing_algorithm": TEXT,
        "issuer": TEXT, "idp": Keys({"token_endpoint": TEXT, "client_id": TEXT,
                                     "client_secret": TEXT, "id_token": TEXT,
                                     "id_token_command": OneOf((TEXT, TEXTS))}),
    }))),
})

LSP_SERVER = OneOf((FLAG, Keys({  # settings/lsp.py
    "command": OneOf((TEXT, TEXTS)), "extensions": TEXTS, "enabled": FLAG,
    "first_wait": NUMBER, "wait": NUMBER, "roots": OneOf((TEXT, TEXTS)),
})))

_RULE = Keys({"permission": TEXT, "pattern": TEXT, "action": TEXT})

_KNOWLEDGE = Keys({
    "totaljs": Scalar((str, bool), "auto, always or never"),
    "forge": FLAG,
    "forgepages": WHOLE,
    "forgechars": WHOLE,
    "conventions": FLAG,
})

# the person's hooks (totem.hooks): an event, then its hooks in order
_HOOK = Keys({"matcher": TEXT, "command": TEXT, "timeout": NUMBER})
_HOOKS = Keys({event: ListOf(_HOOK) for event in (
    "session_start", "user_prompt", "pre_tool", "post_tool", "stop", "notification")})
_SANDBOX_MODE = Scalar((str, bool), "read-only, workspace-write or off")

CONFIG_SCHEMA = Keys({
    "model": TEXT,
    "store": TEXT,  # where sessions are kept: the user's files only (totem.store.location)
    "maxsteps": WHOLE,
    "providers": MapOf(Keys({
        "kind": TEXT, "base_url": TEXT, "key": TEXT,
        "options": MapOf(None),  # what each kind takes (headers, region, timeout...)
        "models": MapOf(OneOf((MapOf(None), Scalar((type(None),), "a mapping")))),
    })),
    "permission": OneOf((ListOf(_RULE), MapOf(OneOf((TEXT, MapOf(TEXT)))))),
    "detect": Keys({"ports": MapOf(WHOLE)}),
    "tools": Keys({
        "bash": Keys({"timeout": NUMBER, "forbidden": TEXTS}),
        "websearch": Keys({"url": OneOf((TEXT, Scalar((type(None),), "text"))),
                           "backend": TEXT, "key": TEXT}),
        "output_limit": WHOLE,
        "mcp_schema_budget": WHOLE,
    }),
    **_KNOWLEDGE.fields,  # the old top-level form, read with a notice
    "knowledge": _KNOWLEDGE,
    "integrations": Keys({
        "slack": Keys({"token": TEXT, "base_url": TEXT}),
        "tts": OneOf((FLAG, Keys({"engine": TEXT, "voice": TEXT, "model": TEXT, "play": FLAG}))),
        "image": Keys({"base_url": TEXT, "key": TEXT, "model": TEXT, "size": TEXT}),
        "agents": FLAG,
    }),
    "mcp": OneOf((MapOf(MCP_SERVER), Scalar((type(None),), "a mapping of servers"))),
    "hooks": _HOOKS,
    "lsp": OneOf((FLAG, MapOf(LSP_SERVER))),  # language servers after edits (settings/lsp.py)
    # the work tree's snapshots, for undo (totem.settings.snapshots)
    "snapshots": OneOf((FLAG, Keys({"enabled": FLAG, "max_file_mb": NUMBER, "keep_days": NUMBER,
                                    "max_store_mb": NUMBER}))),
    # the OS sandbox of bash and process (totem.settings.sandbox)
    "sandbox": OneOf((_SANDBOX_MODE, Keys({"mode": _SANDBOX_MODE, "network": TEXTS,
                                           "hidden": TEXTS, "processes": WHOLE}))),
})

MCP_JSON = Keys({"mcpServers": MapOf(MCP_SERVER), "servers": MapOf(MCP_SERVER),
                 "inputs": None})  # `inputs`: VS Code's prompts for values, shared files


def _where(path: tuple[str, ...]) -> str:
    return ".".join(path) if path else "the top level"


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "text", bool: "true/false",
            int: "a number", float: "a number", type(None): "nothing"}.get(type(value), "a value")


def _scalar(spec: Scalar, value: Any, path: tuple[str, ...]) -> list[str]:
    if isinstance(value, bool) and bool not in spec.types:
        fits = False
    else:
        fits = isinstance(value, spec.types)
    if fits:
        return []
    return [f"{_where(path)}: expected {spec.what}, not {_type_name(value)} ({value!r})"]


def _keys(spec: Keys, value: Any, path: tuple[str, ...]) -> list[str]:
    if not isinstance(value, dict):
        return [f"{_where(path)}: expected a mapping, not {_type_name(value)}"]
    problems: list[str] = []
    for key, item in value.items():
        name = str(key)
        if name not in spec.fields:
            import difflib  # only for a file with a mistake

            near = difflib.get_close_matches(name, list(spec.fields), n=1, cutoff=0.6)
            hint = f" (did you mean '{near[0]}'?)" if near else \
                f" (known keys: {', '.join(sorted(spec.fields))})"
            problems.append(f"{_where((*path, name))}: unknown key '{name}'{hint}")
            continue
        problems += check(spec.fields[name], item, (*path, name))
    return problems


def check(spec: Spec, value: Any, path: tuple[str, ...] = ()) -> list[str]:
    """The problems of `value` against `spec`, each a sentence starting with the key's path."""
    if spec is None:
        return []
    if isinstance(spec, Scalar):
        return _scalar(spec, value, path)
    if isinstance(spec, Keys):
        return _keys(spec, value, path)
    if isinstance(spec, MapOf):
        if not isinstance(value, dict):
            return [f"{_where(path)}: expected a mapping, not {_type_name(value)}"]
        return [p for k, v in value.items() for p in check(spec.value, v, (*path, str(k)))]
    if isinstance(spec, ListOf):
        if not isinstance(value, list):
            return [f"{_where(path)}: expected a list, not {_type_name(value)}"]
        return [p for i, v in enumerate(value) for p in check(spec.item, v, (*path, str(i)))]
    shaped = [c for c in spec.choices if _same_shape(c, value)] or list(spec.choices)
    found = [check(choice, value, path) for choice in shaped]
    if any(not problems for problems in found):
        return []
    return min(found, key=len)


def _same_shape(spec: Spec, value: Any) -> bool:
    """Whether `value` is the kind of thing `spec` describes (a mapping, a list, a scalar)."""
    if isinstance(spec, Keys | MapOf):
        return isinstance(value, dict)
    if isinstance(spec, ListOf):
        return isinstance(value, list)
    return not isinstance(value, dict | list)


def config_problems(data: dict[str, Any]) -> list[str]:
    """What is wrong in a parsed config.yaml (an empty list when nothing is)."""
    return check(CONFIG_SCHEMA, data)


def mcp_json_problems(data: dict[str, Any]) -> list[str]:
    """What is wrong in a parsed `.totem/mcp.json`."""
    return check(MCP_JSON, data)
