"""The integrations for the page's Settings: each one's state, and a key typed there.

A key typed into the page goes to the key store (keys.json, mode 0600) as
`integration-NAME`, and the user configuration refers to it as `${key:integration-NAME}`:
it is never written to the configuration, never sent back, never logged.

    slack       integrations.slack.token
    image       integrations.image.key (and base_url, needed to turn it on)
    websearch   tools.websearch.key with backend brave or tavily
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from totem.settings.secret import Secret

__all__ = ["KEYED", "integrations_view", "set_integration_key"]

# integration -> (where its key is in the config, the key field)
KEYED: dict[str, tuple[tuple[str, str], str]] = {
    "slack": (("integrations", "slack"), "token"),
    "image": (("integrations", "image"), "key"),
    "websearch": (("tools", "websearch"), "key"),
}
_ROWS = ("websearch", "slack", "tts", "image", "agents")


def _key_source(name: str, config: Any) -> str | None:
    found = config.integrations
    secret: Secret | None = {"slack": found.slack.token if found.slack else None,
                             "image": found.image.key if found.image else None,
                             "websearch": found.search.key if found.search else None}.get(name)
    return secret.source() if secret is not None else None


def integrations_view(root: Path) -> list[dict[str, Any]]:
    """One row per integration: on or off, why, and where its key comes from (never the key)."""
    from totem.session.integrations import integration_states
    from totem.settings.config import load_config

    config = load_config(root)
    states = {s.name: s for s in integration_states(config.integrations)}
    states["agents"] = states["agent_list"]
    return [{"name": name, "on": states[name].on, "why": states[name].why,
             "key": _key_source(name, config), "takes_key": name in KEYED} for name in _ROWS]


def set_integration_key(name: str, key: str, *, base_url: str = "", backend: str = "") -> str:
    """Store `key` for the integration `name` and point the user configuration at it; the
    message says what was done. ValueError says what is wrong, for a person."""
    from totem.settings.keys import key_ref, set_key
    from totem.settings.user_config import read_user_config, write_user_config

    if name not in KEYED:
        raise ValueError(f"{name} takes no key (keys: {', '.join(KEYED)})")
    data = read_user_config()
    (outer, inner), field = KEYED[name]
    section = dict((data.get(outer) or {}).get(inner) or {})
    if base_url.strip():
        section["base_url" if name != "websearch" else "url"] = base_url.strip()
    if name == "image" and not section.get("base_url"):
        raise ValueError("the image integration needs a base_url too (such as "
                         "https://api.openai.com/v1)")
    if name == "websearch":
        chosen = backend.strip() or str(section.get("backend") or "")
        if chosen not in ("brave", "tavily"):
            raise ValueError("a web search key is for the brave or tavily backend: choose one")
        section["backend"] = chosen
    stored = f"integration-{name}"
    set_key(stored, key.strip())
    section[field] = key_ref(stored)
    data[outer] = {**(data.get(outer) or {}), inner: section}
    write_user_config(data)
    return f"Stored the key of {name} in the key store; the configuration refers to it."
