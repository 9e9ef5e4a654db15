"""What even a trusted project may not do to the integrations: send your keys elsewhere.

An integration with a key that your own config sets up (Slack's token, the image server's key,
a web search key) keeps its server and its key: the project may not change them. An
integration the project sets up itself must name a key of its own: not one from your key
store, and not a variable that your providers or integrations read or a well-known one.
"""

from __future__ import annotations

import re
from typing import Any

from totem.settings.errors import ConfigError

__all__ = ["guard_user_integrations"]

_ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
# (where in the config, its key field, the fields that choose where the key goes)
_KEYED = (
    (("integrations", "slack"), "token", ("base_url", "token")),
    (("integrations", "image"), "key", ("base_url", "key")),
    (("tools", "websearch"), "key", ("backend", "url", "key")),
)


def _section(data: dict[str, Any], path: tuple[str, str]) -> dict[str, Any]:
    outer = data.get(path[0])
    inner = outer.get(path[1]) if isinstance(outer, dict) else None
    return inner if isinstance(inner, dict) else {}


def _user_variables(user: dict[str, Any], protected: set[str]) -> set[str]:
    names = set(protected)
    for path, key, _ in _KEYED:
        names.update(_ENV_REF.findall(str(_section(user, path).get(key) or "")))
    return names


def _drop(data: dict[str, Any], path: tuple[str, str], fields: list[str]) -> dict[str, Any]:
    outer = dict(data.get(path[0]) or {})
    outer[path[1]] = {k: v for k, v in _section(data, path).items() if k not in fields}
    return {**data, path[0]: outer}


def guard_user_integrations(
    project: dict[str, Any], user: dict[str, Any], *, protected: set[str]
) -> tuple[dict[str, Any], list[str]]:
    """The project's config without what would send one of your keys elsewhere, and what was
    dropped. `protected`: the variables your providers read and the well-known ones. A
    project's own integration that would take your key is a ConfigError."""
    variables = _user_variables(user, protected)
    refused: list[str] = []
    for path, key, routing in _KEYED:
        theirs = _section(project, path)
        where = ".".join(path)
        if not theirs:
            continue
        if _section(user, path).get(key):
            blocked = [f for f in routing if f in theirs]
            if blocked:
                refused.append(f"{where} is yours: the project cannot change its "
                               f"{', '.join(blocked)}")
                project = _drop(project, path, blocked)
            continue
        secret = str(theirs.get(key) or "")
        if "${key:" in secret:
            raise ConfigError(f"{where}.{key}: a project cannot take a key from your key store")
        taken = sorted(set(_ENV_REF.findall(secret)) & variables)
        if taken:
            raise ConfigError(f"{where}.{key}: a project cannot read {', '.join(taken)}, "
                              "a key of yours")
    return project, refused
