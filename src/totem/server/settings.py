"""Settings for the page: providers (add from a template, "Other", test, remove, detect) and
the models table. The work is done where `totem providers` / `totem models` have it done
(providers/admin.py, settings/keys.py, providers/listing.py); this module only
adapts it to JSON.

A key typed into the page goes to the key store (keys.json, mode 0600) and the configuration
refers to it as `${key:NAME}`: it is never written to the configuration, never sent back to
the page, never logged.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from pathlib import Path
from typing import Any

from totem.settings.config import Config, ConfigError, ProviderConfig, load_config

__all__ = ["ModelCache", "add_provider", "detect_servers", "providers_view", "remove_provider",
           "test_provider"]

LIST_TIMEOUT = 8.0  # seconds to list one provider's models


def _template_json(tpl: Any) -> dict[str, Any]:
    return {"id": tpl.id, "label": tpl.label, "kind": tpl.kind, "base_url": tpl.base_url,
            "key_env": tpl.key_env, "needs_key": tpl.needs_key, "local": tpl.local,
            "note": tpl.note}


def providers_view(root: Path) -> dict[str, Any]:
    from totem.providers.catalog.templates import templates
    from totem.settings.user_config import read_user_config, user_config_path

    config = load_config(root)
    try:
        mine = read_user_config().get("providers") or {}
    except ConfigError:
        mine = {}
    return {
        "providers": [{"name": c.name, "kind": c.kind, "base_url": c.base_url,
                       "key": c.key.source() if c.key is not None else "none",
                       "removable": c.name in mine}
                      for c in config.providers.values()],
        "model": config.model,
        "templates": [_template_json(t) for t in templates()],
        "config_path": str(user_config_path()),
    }


def add_provider(
    *, template_id: str, name: str = "", url: str = "", key: str = "", key_env: str = "",
    replace: bool = False,
) -> str:
    """Add a provider to the user configuration, as `totem providers add` does; the message
    says what was done. ValueError (or ConfigError) says what is wrong, for a person."""
    from totem.providers import admin as provider_admin

    added = provider_admin.add_provider(template_id, name=name, url=url, key=key,
                                        key_env=key_env, replace=replace)
    where = added.base_url or "default endpoint"
    return f"Added {added.name} ({added.label}, {where}); {added.key_note}."


def remove_provider(name: str) -> str:
    """Remove a provider of the user configuration (and its stored key, if no other uses it)."""
    from totem.providers import admin as provider_admin

    removed = provider_admin.remove_provider(name)
    return f"Removed {removed.name}" + (" and its stored key." if removed.key_forgotten else ".")


async def _infos(cfg: ProviderConfig) -> list[Any]:
    from totem.providers.listing import list_model_infos

    return await asyncio.wait_for(list_model_infos(cfg), LIST_TIMEOUT)


def _failure(exc: BaseException) -> str:
    from totem.providers.base import ProviderError

    if isinstance(exc, ProviderError):
        return exc.message
    if isinstance(exc, TimeoutError):
        return f"no answer within {LIST_TIMEOUT:g} s"
    if isinstance(exc, ConfigError | ValueError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


async def test_provider(root: Path, name: str) -> dict[str, Any]:
    config = load_config(root)
    cfg = config.providers.get(name)
    if cfg is None:
        return {"ok": False, "message": f"no provider named {name}"}
    try:
        infos = await _infos(cfg)
    except Exception as exc:
        return {"ok": False, "message": f"{name}: {_failure(exc)}"}
    ids = [i.id for i in infos]
    shown = ", ".join(ids[:8]) + (f", … ({len(ids) - 8} more)" if len(ids) > 8 else "")
    return {"ok": True, "message": f"{name}: OK, {len(ids)} models" + (f": {shown}" if ids else ""),
            "models": ids}


async def detect_servers() -> list[dict[str, Any]]:
    from totem.providers.catalog.detect import detect

    return [asdict(found) for found in await detect()]


def _info_json(info: Any) -> dict[str, Any]:
    data = asdict(info)
    data["price"] = asdict(info.price) if info.price is not None else None
    return data


class ModelCache:
    """What each provider lists, kept until the settings change (`clear`)."""

    def __init__(self) -> None:
        self._found: dict[str, list[dict[str, Any]] | str] = {}
        self._lock = asyncio.Lock()

    def clear(self) -> None:
        self._found.clear()

    async def _listing(self, cfg: ProviderConfig) -> list[dict[str, Any]] | str:
        key = f"{cfg.name}\0{cfg.kind}\0{cfg.base_url}"
        if key not in self._found:
            try:
                self._found[key] = [_info_json(i) for i in await _infos(cfg)]
            except Exception as exc:
                return _failure(exc)  # not kept: the server may come up later
        return self._found[key]

    async def table(self, root: Path) -> dict[str, Any]:
        """Every configured provider's models, with what is known of each (None: unknown)."""
        config = load_config(root)
        async with self._lock:
            found = await asyncio.gather(*(self._listing(c) for c in config.providers.values()))
        groups = []
        for cfg, listing in zip(config.providers.values(), found, strict=True):
            models = listing if isinstance(listing, list) else []
            groups.append({"provider": cfg.name, "kind": cfg.kind,
                           "models": _with_configured(config, cfg, models),
                           "error": listing if isinstance(listing, str) else None})
        return {"default": config.model, "providers": groups}


def _with_configured(
    config: Config, cfg: ProviderConfig, listed: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The listed models, and those the configuration names that the provider did not list."""
    from totem.providers.catalog.catalogue import model_info

    names = {m["id"] for m in listed}
    extra = list(cfg.models)
    if config.model and config.model.partition("/")[0] == cfg.name:
        extra.insert(0, config.model.partition("/")[2])
    if config.model and len(config.providers) == 1 and "/" not in config.model:
        extra.insert(0, config.model)
    added = [_info_json(model_info(cfg, m)) for m in dict.fromkeys(extra) if m and m not in names]
    return added + listed
