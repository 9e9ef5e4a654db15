"""`totem models [PROVIDER]`: the models of the configured providers.

    MODEL          CONTEXT  MAX OUT  TOOLS  REASONING  VISION   $/MTOK IN / OUT  SOURCE
    gpt-4o         128,000  16,384   yes    no         yes      2.50 / 10.00     builtin
    my-model       unknown  unknown  unknown unknown   unknown  unknown          unknown

What a provider reports wins over the built-in table; what nobody knows is printed as
`unknown`, never as a number. `--json` prints the same as one JSON list.

The listing itself is `providers.listing.list_model_infos` (the page uses it too). This
module imports only argparse at load time.
"""

from __future__ import annotations

import argparse
import sys

from totem.cli.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_USAGE

TYPE_CHECKING = False  # typing is not imported for `totem --help` or `run`
if TYPE_CHECKING:
    from typing import Any

    from totem.providers.catalog.catalogue import ModelInfo, Price
    from totem.settings.config import ProviderConfig

__all__ = ["add_parsers", "format_rows", "models_command"]

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

    from totem.providers.base import ProviderError
    from totem.providers.listing import list_model_infos
    from totem.settings.config import ConfigError

    async def one(cfg: ProviderConfig) -> list[ModelInfo] | str:
        try:
            return await list_model_infos(cfg)
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
