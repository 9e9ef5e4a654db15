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

TYPE_CHECKING = False  # typing and pathlib are not imported for `totem --help` or `run`
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from totem.providers.catalog.templates import Template
    from totem.settings.config import ProviderConfig

__all__ = ["add_parsers", "providers_command", "resolved", "user_config_path"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


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


# -- the user configuration ------------------------------------------------------------------


def user_config_path() -> Path:
    from totem.settings.paths import config_dir

    return config_dir() / "config.yaml"


def _read_user_config() -> dict[str, Any]:
    import yaml

    from totem.settings.config import ConfigError

    path = user_config_path()
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: cannot be read as YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of settings")
    return data


def _write_user_config(data: dict[str, Any]) -> Path:
    import os
    import tempfile

    import yaml

    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file():
        path.with_name(path.name + ".bak").write_bytes(path.read_bytes())
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)
    fd, tmp = tempfile.mkstemp(prefix=".config-", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, path)
    return path


# -- keys ------------------------------------------------------------------------------------


def _raw_key(cfg: ProviderConfig) -> str:
    """The key as written in the configuration (a reference, normally); never shown."""
    return str(getattr(cfg.key, "_raw", "")) if cfg.key is not None else ""


def _key_state(cfg: ProviderConfig) -> str:
    """Where the key comes from and whether it is there: never the key itself."""
    from totem.settings.keys import KEY_REF, load_keys

    if cfg.key is None:
        return "none"
    raw = _raw_key(cfg)
    env = cfg.key.env_vars()
    refs = KEY_REF.findall(raw)
    if refs:
        stored = load_keys()
        absent = [r for r in refs if r not in stored]
        return f"missing from the key store: {', '.join(absent)}" if absent else "stored"
    if env:
        import os

        absent = [v for v in env if v not in os.environ]
        names = ", ".join(f"${v}" for v in env)
        return f"{names} (not set)" if absent else names
    return "set in the configuration"


def resolved(cfg: ProviderConfig) -> ProviderConfig:
    """`cfg` with its key resolved (`${env:...}` and `${key:...}`), ready for
    `registry.make_provider`; ConfigError naming what is missing."""
    import dataclasses

    from totem.settings.config import ConfigError, Secret
    from totem.settings.keys import resolve_refs

    if cfg.key is None:
        return cfg
    value = cfg.key.reveal()
    if value is None:
        names = ", ".join(cfg.key.env_vars())
        raise ConfigError(f"provider '{cfg.name}': its key comes from the environment "
                          f"variable {names}, which is not set.")
    value, missing = resolve_refs(value)
    if missing:
        raise ConfigError(f"provider '{cfg.name}': no stored key named {', '.join(missing)}; "
                          f"add it again with `totem providers add ... --name {cfg.name}`.")
    return dataclasses.replace(cfg, key=Secret(value))


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
        rows.append([cfg.name, cfg.kind, cfg.base_url or "(default)", _key_state(cfg)])
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
    import re

    from totem.providers.catalog.templates import template

    try:
        tpl = template(args.template)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    name = args.name or tpl.id
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
        raise ValueError(f"a provider name may hold letters, digits, '_', '.' and '-': {name!r}")
    base_url = (args.url or tpl.base_url).rstrip("/")
    if not base_url and tpl.kind != "bedrock":
        raise ValueError(f"template {tpl.id} needs a base URL: pass --url URL")
    data = _read_user_config()
    providers = data.get("providers") or {}
    if not isinstance(providers, dict):
        raise ValueError(f"{user_config_path()}: `providers` must be a mapping")
    if name in providers and not args.force:
        raise ValueError(f"a provider named {name} exists already; pass --name NEW or --force.")
    spec: dict[str, Any] = {"kind": tpl.kind}
    if base_url:
        spec["base_url"] = base_url
    key, note = _key_entry(args, tpl, name)
    if key is not None:
        spec["key"] = key
    if tpl.options:
        spec["options"] = dict(tpl.options)
    providers[name] = spec
    data["providers"] = providers
    path = _write_user_config(data)
    print(f"Added provider {name} ({tpl.label}, {base_url or 'default endpoint'}); {note}.")
    print(f"Written to {path}. Try `totem providers test {name}` and `totem models {name}`.")
    return EXIT_OK


def _key_entry(args: argparse.Namespace, tpl: Template, name: str) -> tuple[str | None, str]:
    """What `key:` says in the configuration (a reference, never the key) and a note."""
    import re

    from totem.settings.keys import key_ref, keys_path, mask, set_key

    if args.key_env:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", args.key_env):
            raise ValueError(f"not an environment variable name: {args.key_env!r}")
        return "${env:" + args.key_env + "}", f"key from ${args.key_env}"
    if args.no_key or not (tpl.needs_key or args.ask_key):
        return None, "no key"
    key = _read_key(name, tpl)
    if key is not None:
        set_key(name, key)
        return key_ref(name), f"key {mask(key)} stored in {keys_path()}"
    if tpl.key_env:
        return "${env:" + tpl.key_env + "}", f"no key given: it will come from ${tpl.key_env}"
    return None, "no key given"


def _remove(args: argparse.Namespace) -> int:
    from pathlib import Path

    from totem.settings.config import config_files
    from totem.settings.keys import KEY_REF, delete_key

    data = _read_user_config()
    providers = data.get("providers") or {}
    if not isinstance(providers, dict) or args.name not in providers:
        elsewhere = [str(p) for p in config_files(Path.cwd())[1:]
                     if p.is_file() and args.name in _providers_in(p)]
        where = f" It is defined in {', '.join(elsewhere)}: edit that file." if elsewhere else ""
        print(f"totem: no provider named {args.name} in {user_config_path()}.{where}",
              file=sys.stderr)
        return EXIT_USAGE
    spec = providers.pop(args.name)
    data["providers"] = providers
    _write_user_config(data)
    refs = KEY_REF.findall(str(spec.get("key") or "")) if isinstance(spec, dict) else []
    still = {r for other in providers.values() if isinstance(other, dict)
             for r in KEY_REF.findall(str(other.get("key") or ""))}
    forgotten = [r for r in refs if r not in still and delete_key(r)]
    extra = " and its stored key" if forgotten else ""
    print(f"Removed provider {args.name}{extra}.")
    return EXIT_OK


def _providers_in(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}
    found = data.get("providers") if isinstance(data, dict) else None
    return found if isinstance(found, dict) else {}


def _test(args: argparse.Namespace) -> int:
    import asyncio

    from totem.cli.models import list_model_infos
    from totem.providers.base import ProviderError

    config = _load()
    cfg = config.providers.get(args.name)
    if cfg is None:
        known = ", ".join(sorted(config.providers)) or "none"
        print(f"totem: no provider named {args.name}; configured: {known}", file=sys.stderr)
        return EXIT_USAGE
    try:
        infos = asyncio.run(list_model_infos(resolved(cfg)))
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
