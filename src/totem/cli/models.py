"""`totem models [PROVIDER]`: the models of the configured providers.

    MODEL          CONTEXT  MAX OUT  TOOLS  REASONING  VISION   $/MTOK IN / OUT  SOURCE
    gpt-4o         128,000  16,384   yes    no         yes      2.50 / 10.00     builtin
    my-model       unknown  unknown  unknown unknown   unknown  unknown          unknown

What a provider reports wins over the built-in table; what nobody knows is printed as
`unknown`, never as a number. `--json` prints the same as one JSON list.

`list_model_infos(cfg)` is the library entry point (the web UI can use it too): LiteLLM
through /model/info, the OpenAI-compatible kinds through GET /models (keeping the extra
fields servers add), the other kinds through their adapter's `list_model_infos` or
`list_models`. This module imports only argparse at load time.
"""

from __future__ import annotations

import argparse
import sys

TYPE_CHECKING = False  # typing is not imported for `totem --help` or `run`
if TYPE_CHECKING:
    from typing import Any

    from totem.providers.catalog.catalogue import ModelInfo, Price
    from totem.settings.config import ProviderConfig

__all__ = ["add_parsers", "format_rows", "list_model_infos", "models_command"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
UNKNOWN = "unknown"


def add_parsers(subparsers: Any) -> None:
    """Add `models` to the `totem` sub-command parsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "models", help="list the models of the configured providers")
    parser.add_argument("provider", nargs="?", help="only this provider")
    parser.add_argument("--json", action="store_true", help="print one JSON list")
    parser.set_defaults(handler=models_command)


def models_command(args: argparse.Namespace) -> int:
    import asyncio
    from pathlib import Path

    from totem.settings.config import ConfigError, load_config

    try:
        config = load_config(Path.cwd())
    except ConfigError as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.provider and args.provider not in config.providers:
        known = ", ".join(sorted(config.providers)) or "none"
        print(f"totem: no provider named {args.provider}; configured: {known}", file=sys.stderr)
        return EXIT_USAGE
    names = [args.provider] if args.provider else list(config.providers)
    if not names:
        print("No provider is configured: see `totem providers add`.", file=sys.stderr)
        return EXIT_USAGE
    found, errors = asyncio.run(_gather([config.providers[n] for n in names]))
    if args.json:
        import json

        print(json.dumps([_as_dict(i) for i in found], indent=1))
    elif found:
        print(format_rows(found, with_provider=len(names) > 1))
    for name, message in errors:
        print(f"{name}: {message}", file=sys.stderr)
    return EXIT_ERROR if errors else EXIT_OK


async def _gather(cfgs: list[ProviderConfig]) -> tuple[list[ModelInfo], list[tuple[str, str]]]:
    import asyncio

    from totem.cli.providers import resolved
    from totem.providers.base import ProviderError
    from totem.settings.config import ConfigError

    async def one(cfg: ProviderConfig) -> list[ModelInfo] | str:
        try:
            return await list_model_infos(resolved(cfg))
        except ProviderError as exc:
            return exc.message
        except ConfigError as exc:
            return str(exc)

    results = await asyncio.gather(*(one(c) for c in cfgs))
    infos: list[ModelInfo] = []
    errors: list[tuple[str, str]] = []
    for cfg, result in zip(cfgs, results, strict=True):
        if isinstance(result, str):
            errors.append((cfg.name, result))
        else:
            infos += result
    return infos, errors


async def list_model_infos(cfg: ProviderConfig) -> list[ModelInfo]:
    """What is known of each model of the provider `cfg` (its key already resolved: see
    `cli.providers.resolved`). Raises the adapter's `ProviderError` when it cannot list."""
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


# -- output ----------------------------------------------------------------------------------


def _yes_no(value: bool | None) -> str:
    return UNKNOWN if value is None else ("yes" if value else "no")


def _number(value: int | None) -> str:
    return UNKNOWN if value is None else f"{value:,}"


def _price(price: Price | None) -> str:
    if price is None:
        return UNKNOWN
    return f"{price.input:.2f} / {price.output:.2f}"


def _tools(info: ModelInfo) -> str:
    if info.tools_unreliable and info.tools is not False:
        return "unreliable"
    return _yes_no(info.tools)


def format_rows(infos: list[ModelInfo], *, with_provider: bool = False) -> str:
    """The table of `totem models`."""
    head = ["MODEL", "CONTEXT", "MAX OUT", "TOOLS", "REASONING", "VISION",
            "$/MTOK IN / OUT", "SOURCE"]
    rows = [(["PROVIDER"] if with_provider else []) + head]
    for info in infos:
        row = [info.id, _number(info.context_window), _number(info.max_output), _tools(info),
               _yes_no(info.reasoning), _yes_no(info.vision), _price(info.price), info.source]
        rows.append(([info.provider] if with_provider else []) + row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )


def _as_dict(info: ModelInfo) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(info)
