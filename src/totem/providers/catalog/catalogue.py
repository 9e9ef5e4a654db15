"""The model catalogue: what is known about a model, and what a step costs.

What a provider reports about a model wins over the built-in table (`catalogue.json` beside
this module, data only), and the user's configuration (`providers.NAME.models.MODEL`) wins
over both. Whatever nobody knows stays None and is shown as unknown: nothing is guessed.

    info = model_info(provider_cfg, "gpt-4o", reported={"context_window": 128000})
    cost(usage, info.price)        # USD, or None when the price is unknown
    tools_warning(info)            # a line to show before a run, or None

Prices are USD per million tokens. `Usage.input` counts every prompt token, those read from
or written to a cache included; cached tokens are billed at the cache prices (at the input
price when the cache price is unknown), the rest at the input price.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from totem.messages import Usage
from totem.providers.catalog.profiles import profile_for

if TYPE_CHECKING:
    from totem.settings.config import ProviderConfig

__all__ = ["ModelInfo", "Price", "Source", "builtin_info", "cost", "model_info",
           "normalize_id", "price_from", "reported_from_listing", "tools_warning"]

Source: TypeAlias = Literal["provider", "builtin", "config", "unknown"]

_TABLE = Path(__file__).with_name("catalogue.json")
# Suffixes that name a snapshot of a model rather than another model.
_SUFFIXES = re.compile(
    r"(?:-v\d+(?::\d+)?|@\d{8}|@latest|:latest|-latest|-\d{8}|-\d{4}-\d{2}-\d{2}|-\d{4})$"
)


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens; a cache price None means the input price applies."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None


@dataclass(slots=True)
class ModelInfo:
    id: str
    provider: str
    context_window: int | None = None
    max_output: int | None = None
    tools: bool | None = None
    reasoning: bool | None = None
    vision: bool | None = None
    price: Price | None = None
    source: Source = "unknown"
    tools_unreliable: bool = False  # known not to call tools reliably (small models...)


@dataclass(frozen=True, slots=True)
class _Entry:
    pattern: re.Pattern[str]
    family: str
    fields: dict[str, Any]  # context_window, max_output, tools, reasoning, vision: non-None
    price: Price | None
    tools_unreliable: bool


def normalize_id(model: str) -> str:
    """The id the table is matched on: lower case, after the last '/', snapshot suffix off."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    for _ in range(3):  # e.g. "-20250929-v1:0"
        stripped = _SUFFIXES.sub("", name)
        if stripped == name or not stripped:
            break
        name = stripped
    return name


def price_from(data: Any) -> Price | None:
    """A `Price` from a mapping with input and output (per million tokens); else None."""
    if isinstance(data, Price):
        return data
    if not isinstance(data, Mapping):
        return None
    numbers = {k: _number(data.get(k)) for k in ("input", "output", "cache_read", "cache_write")}
    inp, out = numbers["input"], numbers["output"]
    if inp is None or out is None:
        return None
    return Price(inp, out, numbers["cache_read"], numbers["cache_write"])


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return int(value)


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """The known fields of a mapping, None dropped (`context` is read as context_window)."""
    context = data.get("context_window", data.get("context"))
    found = {
        "context_window": _int(context),
        "max_output": _int(data.get("max_output")),
        "tools": _bool(data.get("tools")),
        "reasoning": _bool(data.get("reasoning")),
        "vision": _bool(data.get("vision")),
    }
    return {k: v for k, v in found.items() if v is not None}


@lru_cache(maxsize=1)
def _table() -> tuple[_Entry, ...]:
    data = json.loads(_TABLE.read_text(encoding="utf-8"))
    return tuple(
        _Entry(
            pattern=re.compile(item["match"]),
            family=str(item.get("family", "")),
            fields=_fields(item),
            price=price_from(item.get("price")),
            tools_unreliable=bool(item.get("tools_unreliable", False)),
        )
        for item in data["models"]
    )


def _lookup(model: str) -> _Entry | None:
    name = normalize_id(model)
    return next((e for e in _table() if e.pattern.search(name)), None)


def builtin_info(model: str, *, provider: str = "") -> ModelInfo | None:
    """What the built-in table says about `model`, or None when it does not know it."""
    entry = _lookup(model)
    if entry is None:
        return None
    return ModelInfo(id=model, provider=provider, price=entry.price, source="builtin",
                     tools_unreliable=entry.tools_unreliable, **entry.fields)


def model_info(
    provider_cfg: ProviderConfig | None,
    model: str,
    *,
    reported: Mapping[str, Any] | None = None,
) -> ModelInfo:
    """What is known about `model`: the table, then what the provider `reported`, then the
    configuration of `provider_cfg` (`models: {MODEL: {context: ..., tools: ...}}`).

    `reported` may hold context_window, max_output, tools, reasoning, vision, price (a
    `Price` or a mapping per million tokens), tools_unreliable, and `underlying`: the model
    behind an alias (a gateway's `litellm_params.model`), matched before `model` itself.
    """
    provider = provider_cfg.name if provider_cfg is not None else ""
    reported = reported or {}
    underlying = str(reported.get("underlying") or "")
    # The model behind an alias first: "my-qwen" would match only the generic qwen entry.
    entry = (_lookup(underlying) if underlying else None) or _lookup(model)
    info = ModelInfo(id=model, provider=provider)
    if entry is not None:
        _apply(info, entry.fields, entry.price, "builtin")
        info.tools_unreliable = entry.tools_unreliable
    _apply(info, _fields(reported), price_from(reported.get("price")), "provider")
    names = [model, underlying] if underlying else [model]
    if reported.get("tools_unreliable") is True or any(
        profile_for(normalize_id(n)).tools is False for n in names
    ):
        info.tools_unreliable = True
    configured = provider_cfg.models.get(model) if provider_cfg is not None else None
    if isinstance(configured, Mapping):
        _apply(info, _fields(configured), price_from(configured.get("price")), "config")
        if isinstance(configured.get("tools_unreliable"), bool):
            info.tools_unreliable = configured["tools_unreliable"]
    return info


def _apply(info: ModelInfo, fields: dict[str, Any], price: Price | None, source: Source) -> None:
    for name, value in fields.items():
        setattr(info, name, value)
    if price is not None:
        info.price = price
    if fields or price is not None:
        info.source = source


def reported_from_listing(entry: Mapping[str, Any]) -> dict[str, Any]:
    """What one entry of an OpenAI-style `GET /models` says beyond its id, for `model_info`.

    Servers add their own fields: vLLM `max_model_len`; OpenRouter `context_length`,
    `top_provider.max_completion_tokens`, `supported_parameters`, `pricing` (USD per token,
    as strings), `architecture.input_modalities`; Groq `context_window`; Mistral
    `max_context_length` and `capabilities`; LiteLLM `max_input_tokens`/`max_output_tokens`.
    """
    top, caps = _mapping(entry.get("top_provider")), _mapping(entry.get("capabilities"))
    params = entry.get("supported_parameters")
    arch = _mapping(entry.get("architecture"))
    modalities = arch.get("input_modalities")
    context = next((v for v in (entry.get(k) for k in (
        "max_model_len", "context_length", "context_window", "max_context_length",
        "max_input_tokens")) if _int(v)), None)
    output = top.get("max_completion_tokens") or entry.get("max_completion_tokens") \
        or entry.get("max_output_tokens")
    reported: dict[str, Any] = {
        "context_window": _int(context),
        "max_output": _int(output),
        "tools": _bool(caps.get("function_calling")),
        "vision": _bool(caps.get("vision")),
        "price": _listing_price(entry.get("pricing")),
    }
    if isinstance(params, list):
        reported["tools"] = "tools" in params
        reported["reasoning"] = "reasoning" in params or "include_reasoning" in params
    if isinstance(modalities, list):
        reported["vision"] = "image" in modalities
    return {k: v for k, v in reported.items() if v is not None}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _listing_price(pricing: Any) -> Price | None:
    if not isinstance(pricing, Mapping):
        return None

    def per_million(key: str) -> float | None:
        try:
            value = float(pricing[key])
        except (KeyError, TypeError, ValueError):
            return None
        return round(value * 1_000_000, 6) if value >= 0 else None

    inp, out = per_million("prompt"), per_million("completion")
    if inp is None or out is None:
        return None
    return Price(inp, out, per_million("input_cache_read"), per_million("input_cache_write"))


def cost(usage: Usage, price: Price | None) -> float | None:
    """USD for `usage` at `price`; None when the price is unknown."""
    if price is None:
        return None
    cached = usage.cache_read + usage.cache_write
    fresh = max(usage.input - cached, 0)
    read = price.cache_read if price.cache_read is not None else price.input
    write = price.cache_write if price.cache_write is not None else price.input
    total = (
        fresh * price.input
        + usage.cache_read * read
        + usage.cache_write * write
        + usage.output * price.output
    )
    return total / 1_000_000


def tools_warning(info: ModelInfo) -> str | None:
    """A line to show before a run when the model is known not to call tools (reliably)."""
    name = f"{info.provider}/{info.id}" if info.provider else info.id
    if info.tools is False:
        return (f"{name} is known not to support tool calls: it can answer, but it cannot "
                "read, edit or run anything. Choose another model for work on files.")
    if info.tools_unreliable:
        return (f"{name} is known not to call tools reliably: expect calls written as text, "
                "repeated or skipped. A larger model does better.")
    return None
