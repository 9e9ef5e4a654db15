"""`totem sessions`, `totem export ID`, `totem undo`, `totem redo`: a project's history.

    ID                   UPDATED           TOKENS   COST     MODEL        TITLE
    ses_6123...          2026-12-01 18:20  12,400   $0.0123  fake/m       fix the parser

`export` prints a session as JSON (the page's export format) or Markdown, every string
scrubbed of the configured keys and the secrets of the environment. `undo` puts back the
files of the last request that changed some (`--steps N` for more), `redo` makes them again.
"""

from __future__ import annotations

import argparse
import sys

from totem.cli.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_USAGE

TYPE_CHECKING = False  # typing is not imported for `totem --help` or `run`
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from totem.policy.redact import Redactor
    from totem.settings.config import Config
    from totem.store.base import SessionInfo, Store

__all__ = ["add_parsers"]


def add_parsers(subparsers: Any) -> None:
    """Add `sessions`, `export`, `undo` and `redo` to the `totem` sub-command parsers."""
    listing = subparsers.add_parser("sessions", help="list this project's sessions")
    listing.add_argument("--limit", type=int, default=30)
    listing.add_argument("--json", action="store_true", help="print one JSON list")
    listing.set_defaults(handler=sessions_command)
    export = subparsers.add_parser("export", help="print a session, secrets scrubbed")
    export.add_argument("session", help="the session's id (see `totem sessions`)")
    export.add_argument("--format", choices=["md", "json"], default="md")
    export.set_defaults(handler=export_command)
    for name, verb in (("undo", "put back the files of the last request"),
                       ("redo", "make the changes of the last undone request again")):
        parser = subparsers.add_parser(name, help=verb)
        parser.add_argument("--session", "-s", dest="history_session",
                            help="the session (default: this project's latest)")
        parser.add_argument("--steps", "-n", type=int, default=1, help="how many requests")
        parser.set_defaults(handler=undo_command, direction=name)


def _store() -> Store:
    from totem.store.location import open_store

    return open_store()  # the person's store: SQLite, or PostgreSQL when configured


def _config(root: Path) -> Config | None:
    from totem.settings.config import ConfigError, load_config

    try:
        return load_config(root)
    except ConfigError:
        return None


def session_usage(store: Store, session_id: str) -> tuple[int, int]:
    """Input and output tokens of the session's messages."""
    total_in = total_out = 0
    for message in store.messages(session_id):
        total_in += message.usage.input
        total_out += message.usage.output
    return total_in, total_out


def _cost(store: Store, info: SessionInfo, config: Config | None) -> float | None:
    from totem.messages import Usage
    from totem.providers.catalog.catalogue import cost, model_info

    provider, _, model = info.model.partition("/")
    if not model:
        return None
    pconf = config.providers.get(provider) if config is not None else None
    price = model_info(pconf, model).price
    usage = Usage()
    for message in store.messages(info.id):
        usage.add(message.usage)
    return cost(usage, price)


def _rows(store: Store, root: Path, limit: int) -> list[dict[str, Any]]:
    from totem.server.sessions import thread_ids

    config = _config(root)
    threads = thread_ids(store, str(root))
    rows = []
    for info in store.list_sessions(str(root), limit=limit):
        if info.id in threads:
            continue
        tokens_in, tokens_out = session_usage(store, info.id)
        rows.append({"id": info.id, "title": info.title, "updated": info.updated,
                     "model": info.model, "input_tokens": tokens_in,
                     "output_tokens": tokens_out, "cost": _cost(store, info, config),
                     "forked_from": info.parent_id})
    return rows


def sessions_command(args: argparse.Namespace) -> int:
    import json
    import time
    from pathlib import Path

    store = _store()
    try:
        rows = _rows(store, Path.cwd().resolve(), args.limit)
    finally:
        store.close()
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return EXIT_OK
    if not rows:
        print("No session in this project yet.")
        return EXIT_OK
    print(f"{'ID':<24} {'UPDATED':<16}  {'TOKENS':>9}  {'COST':>8}  {'MODEL':<20} TITLE")
    for row in rows:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["updated"]))
        tokens = row["input_tokens"] + row["output_tokens"]
        cost = f"${row['cost']:.4f}" if row["cost"] is not None else "unknown"
        print(f"{row['id']:<24} {when:<16}  {tokens:>9,}  {cost:>8}  {row['model']:<20} "
              f"{row['title']}")
    return EXIT_OK


def _redactor(root: Path) -> Redactor:
    from totem.policy.redact import Redactor

    redact = Redactor.from_environment()
    config = _config(root)
    for pconf in config.providers.values() if config is not None else ():
        if pconf.key is not None:
            redact.add(pconf.key.reveal())
    return redact


def export_command(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from totem.server.sessions import export

    store = _store()
    try:
        info = store.get_session(args.session)
        if info is None:
            print(f"totem: no session with id {args.session}", file=sys.stderr)
            return EXIT_USAGE
        data = export(store, info, redact=_redactor(Path.cwd().resolve()))
    finally:
        store.close()
    if args.format == "json":
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        from totem.cli.markdown_export import to_markdown

        print(to_markdown(data), end="")
    return EXIT_OK


def undo_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from totem.session.undo import redo, undo

    root = Path.cwd().resolve()
    store = _store()
    try:
        info = (store.get_session(args.history_session) if args.history_session
                else store.latest_session(str(root)))
        if info is None:
            print("totem: no such session" if args.history_session
                  else "totem: no session in this project yet", file=sys.stderr)
            return EXIT_USAGE
        act = undo if args.direction == "undo" else redo
        result = act(store, session_id=info.id, root=Path(info.project), steps=args.steps)
    finally:
        store.close()
    print(result.summary, file=sys.stdout if result.ok else sys.stderr)
    return EXIT_OK if result.ok else EXIT_ERROR
