"""What a provider's models are: its own listing, with what the catalogue knows of each.

Used by `totem models`, `totem providers test` and the page's models table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from totem.providers.catalog.catalogue import ModelInfo
    from totem.settings.config import ProviderConfig

__all__ = ["list_model_infos"]


async def list_model_infos(cfg: ProviderConfig) -> list[ModelInfo]:
    """What is known of each model of the provider `cfg`. Raises the adapter's
    `ProviderError` when it cannot list, ConfigError when its key is missing."""
    from totem.providers.catalog.catalogue import model_info
    from totem.providers.registry import OPENAI_KINDS, make_provider

    provider: Any = make_provider(cfg)
    try:
        infos = getattr(provider, "model_infos", None)
        if infos is not None:  # the adapter knows best (LiteLLM's /model/info)
            result: list[ModelInfo] = await infos()
            return result
        if cfg.kind in OPENAI_KINDS:
            entries = await _openai_listing(cfg)
            if entries is not None:
                return [model_info(cfg, str(e["id"]), reported=_listing(e)) for e in entries]
        listing = getattr(provider, "list_models", None)
        if listing is None:
            return []
        return [model_info(cfg, _model_id(item), reported=_reported(item))
                for item in await listing()]
    finally:
        await provider.aclose()


def _listing(entry: dict[str, Any]) -> dict[str, Any]:
    from totem.providers.catalog.catalogue import reported_from_listing

    return reported_from_listing(entry)


async def _openai_listing(cfg: ProviderConfig) -> list[dict[str, Any]] | None:
    """The raw entries of GET {base_url}/models; None when that fails (the adapter's own
    `list_models` then says why, in its words)."""
    import httpx

    headers = {"User-Agent": "totem",
               **{str(k): str(v) for k, v in (cfg.options.get("headers") or {}).items()}}
    key = cfg.key.reveal() if cfg.key is not None else None
    if key:
        headers["Authorization"] = f"Bearer {key}"
    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=10.0)) as client:
            response = await client.get(f"{cfg.base_url}/models", headers=headers)
        data = response.json() if response.status_code < 400 else None
    except (httpx.HTTPError, ValueError):
        return None
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None
    return [e for e in items if isinstance(e, dict) and "id" in e]


def _model_id(item: Any) -> str:
    from collections.abc import Mapping

    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        return str(item.get("id") or item.get("name") or "")
    return str(getattr(item, "id", "") or getattr(item, "name", ""))


# Attribute names adapters use for what they know (Ollama's /api/show, Gemini's model list).
_ALIASES = {
    "context_window": ("context_window", "context_length", "input_token_limit"),
    "max_output": ("max_output", "output_token_limit"),
    "tools": ("tools",),
    "reasoning": ("reasoning", "thinking"),
    "vision": ("vision",),
}


def _reported(item: Any) -> dict[str, Any]:
    from collections.abc import Mapping

    if isinstance(item, str):
        return {}
    get = item.get if isinstance(item, Mapping) else lambda k: getattr(item, k, None)
    reported: dict[str, Any] = {}
    for field, names in _ALIASES.items():
        value = next((v for v in map(get, names) if v is not None), None)
        if value is not None:
            reported[field] = value
    return reported
