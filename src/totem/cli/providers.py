"""`totem providers`: list, add, remove, test and detect providers.

    totem providers                          the configured providers (never a key)
    totem providers templates                what `add` knows
    totem providers add groq                 asks for the key (hidden), stores it in keys.json
    echo "$KEY" | totem providers add groq   the key from stdin
    totem providers add groq --key-env GROQ_API_KEY    the key stays in the environment
    totem providers add other --url http://host:9000/v1 --name mine
    totem providers remove NAME
    totem providers test NAME                lists its models, or says plainly what failed
    totem providers detect                   local servers on their usual ports

`add` and `remove` edit the user configuration (~/.config/totem/config.yaml) and keep the
rest of it (comments excepted: the file is rewritten, the previous one kept as .bak). This
module imports only argparse at load time; everything else is imported by the handlers.
"""

from __future__ import annotations

import argparse
import sys

from totem.cli.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_USAGE

TYPE_CHECKING = False  # typing and pathlib are not imported for `totem --help` or `run`
if TYPE_CHECKING:
    from typing import Any

    from totem.providers.catalog.templates import Template

__all__ = ["add_parsers", "providers_command"]


def add_parsers(subparsers: Any) -> None:
    """Add `providers` (with its sub-commands) to the `totem` sub-command parsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "providers", help="list, add, remove, test and detect providers")
    parser.set_defaults(handler=providers_command, providers_action="list")
    sub = parser.add_subparsers(dest="providers_action")
    sub.add_parser("list", help="the configured providers")
    sub.add_parser("templates", help="the providers that `add` knows")
    add = sub.add_parser("add", help="add a provider from a template (or `other` with --url)")
    add.add_argument("template", help="a template id (see `totem providers templates`)")
    add.add_argument("--name", help="the provider's name (default: the template id)")
    add.add_argument("--url", help="the base URL (required for `other`)")
    keys = add.add_mutually_exclusive_group()
    keys.add_argument("--key-env", metavar="VAR",
                      help="take the key from this environment variable when used")
    keys.add_argument("--no-key", action="store_true", help="do not ask for a key")
    keys.add_argument("--ask-key", action="store_true",
                      help="ask for a key even where the template needs none")
    add.add_argument("--force", action="store_true", help="replace a provider of that name")
    remove = sub.add_parser("remove", help="remove a provider (and its stored key)")
    remove.add_argument("name")
    test = sub.add_parser("test", help="list a provider's models, or show what fails")
    test.add_argument("name")
    detect = sub.add_parser("detect", help="look for model servers on this computer")
    detect.add_argument("--host", default="127.0.0.1")
    detect.add_argument("--port", action="append", default=[], metavar="NAME=PORT",
                        help="probe this port as NAME instead of the usual ones (repeatable)")


def providers_command(args: argparse.Namespace) -> int:
    from totem.settings.config import ConfigError
    from totem.settings.keys import KeyStoreError

    action = args.providers_action or "list"
    handlers = {"list": _list, "templates": _templates, "add": _add, "remove": _remove,
                "test": _test, "detect": _detect}
    try:
        return handlers[action](args)
    except (ConfigError, KeyStoreError, ValueError) as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _read_key(name: str, tpl: Template) -> str | None:
    import getpass

    if sys.stdin is None:
        return None
    if sys.stdin.isatty():
        hint = f" (usually in ${tpl.key_env})" if tpl.key_env else ""
        value = getpass.getpass(f"API key for {name}{hint}, input hidden, empty for none: ")
    else:
        value = sys.stdin.readline()
    return value.strip() or None


# -- sub-commands ----------------------------------------------------------------------------


def _load() -> Any:
    from pathlib import Path

    from totem.settings.config import load_config

    return load_config(Path.cwd())


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _list(args: argparse.Namespace) -> int:
    config = _load()
    if not config.providers:
        print("No provider is configured. Add one with `totem providers add TEMPLATE` "
              "(see `totem providers templates`), or look for local servers with "
              "`totem providers detect`.")
        return EXIT_OK
    rows = [["NAME", "KIND", "BASE URL", "KEY"]]
    for cfg in config.providers.values():
        key = cfg.key.source() if cfg.key is not None else "none"
        rows.append([cfg.name, cfg.kind, cfg.base_url or "(default)", key])
    print(_table(rows))
    if config.model:
        print(f"\ndefault model: {config.model}")
    return EXIT_OK


def _templates(args: argparse.Namespace) -> int:
    from totem.providers.catalog.templates import templates

    rows = [["ID", "NAME", "KIND", "BASE URL", "KEY"]]
    for tpl in templates():
        key = f"${tpl.key_env}" if tpl.key_env else "-"
        if tpl.key_env and not tpl.needs_key:
            key += " (optional)"
        rows.append([tpl.id, tpl.label, tpl.kind, tpl.base_url or "(give --url)", key])
    print(_table(rows))
    return EXIT_OK


def _add(args: argparse.Namespace) -> int:
    from totem.providers.admin import add_provider
    from totem.providers.catalog.templates import template

    try:
        tpl = template(args.template)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    wanted = not args.no_key and (tpl.needs_key or args.ask_key)
    key = _read_key(args.name or tpl.id, tpl) if wanted and not args.key_env else None
    added = add_provider(args.template, name=args.name or "", url=args.url or "",
                         key=key or "", key_env=args.key_env or "", key_wanted=wanted,
                         replace=args.force)
    print(f"Added provider {added.name} ({added.label}, "
          f"{added.base_url or 'default endpoint'}); {added.key_note}.")
    print(f"Written to {added.path}. Try `totem providers test {added.name}` "
          f"and `totem models {added.name}`.")
    return EXIT_OK


def _remove(args: argparse.Namespace) -> int:
    from pathlib import Path

    from totem.providers.admin import remove_provider

    removed = remove_provider(args.name, root=Path.cwd())
    extra = " and its stored key" if removed.key_forgotten else ""
    print(f"Removed provider {removed.name}{extra}.")
    return EXIT_OK


def _test(args: argparse.Namespace) -> int:
    import asyncio

    from totem.providers.base import ProviderError
    from totem.providers.listing import list_model_infos

    config = _load()
    cfg = config.providers.get(args.name)
    if cfg is None:
        known = ", ".join(sorted(config.providers)) or "none"
        print(f"totem: no provider named {args.name}; configured: {known}", file=sys.stderr)
        return EXIT_USAGE
    try:
        infos = asyncio.run(list_model_infos(cfg))
    except ProviderError as exc:
        print(f"{args.name}: {exc.message}")
        return EXIT_ERROR
    names = [i.id for i in infos]
    shown = ", ".join(names[:20]) + (f", ... ({len(names) - 20} more)" if len(names) > 20 else "")
    print(f"{args.name}: OK, {len(names)} model{'s' if len(names) != 1 else ''}"
          + (f": {shown}" if names else ""))
    return EXIT_OK


def _detect(args: argparse.Namespace) -> int:
    from totem.providers.catalog.detect import default_ports, detect_sync

    ports: dict[str, int] | None = None
    if args.port:
        ports = {}
        for item in args.port:
            name, _, port = item.partition("=")
            if not name or not port.isdigit():
                print(f"totem: --port expects NAME=PORT, got {item!r}", file=sys.stderr)
                return EXIT_USAGE
            ports[name] = int(port)
    probed = ports if ports is not None else default_ports()
    found = detect_sync(host=args.host, ports=probed)
    if not found:
        tried = ", ".join(f"{n} {p}" for n, p in probed.items())
        print(f"No model server found on {args.host} (tried {tried}).")
        return EXIT_OK
    for item in found:
        print(f"{item.name}  {item.base_url}  {item.note}")
        if item.models:
            more = f" ... ({len(item.models) - 10} more)" if len(item.models) > 10 else ""
            print(f"    models: {', '.join(item.models[:10])}{more}")
        ask = " --ask-key" if item.needs_key and not _needs_key(item.name) else ""
        print(f"    add it: totem providers add {item.name} --url {item.base_url}{ask}")
    return EXIT_OK


def _needs_key(template_id: str) -> bool:
    from totem.providers.catalog.templates import template

    try:
        return template(template_id).needs_key
    except KeyError:
        return False
