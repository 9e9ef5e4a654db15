"""`totem mcp list` and `totem mcp test NAME`: the configured MCP servers, started to see.

    totem mcp list [--yes] [--no-start]   every server: kind, what it runs, state, its tools
    totem mcp test NAME [--yes]           start one server, list its tools, stop it
    totem mcp login NAME [--no-browser]   sign in to an HTTP server (OAuth) once, for later runs
    totem mcp logout NAME                 forget its stored tokens

Starting a server asks first, as in a run (a rule or --yes allows it; with no terminal and
no rule it is refused). Every server started here is stopped before the command returns.
Exit code: 0 when every server asked for is ready, 1 otherwise, 2 for an unknown name.
"""

from __future__ import annotations

import argparse
import sys

TYPE_CHECKING = False  # typing is not imported for `totem --help`
if TYPE_CHECKING:
    from typing import Any

__all__ = ["add_parser", "main", "mcp_command"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `mcp` with its `list` and `test` commands to the `totem` parser's subparsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "mcp", help="list and test the configured MCP servers"
    )
    commands = parser.add_subparsers(dest="mcp_command", required=True)
    listing = commands.add_parser("list", help="the configured servers, their state and tools")
    listing.add_argument(
        "--no-start", action="store_true", help="show the configuration only; start nothing"
    )
    test = commands.add_parser("test", help="start one server, list its tools, stop it")
    test.add_argument("name", help="the server's name")
    for sub in (listing, test):
        sub.add_argument("--yes", "-y", action="store_true", help="start servers without asking")
    login = commands.add_parser("login", help="sign in to an HTTP server with OAuth, once")
    login.add_argument("name", help="the server's name")
    login.add_argument("--no-browser", action="store_true",
                       help="print the sign-in address instead of opening a browser")
    logout = commands.add_parser("logout", help="forget an HTTP server's stored OAuth tokens")
    logout.add_argument("name", help="the server's name")
    return parser


def mcp_command(args: argparse.Namespace) -> int:
    import asyncio

    from totem.settings.config import ConfigError

    try:
        return asyncio.run(_mcp(args))
    except ConfigError as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return 2


async def _mcp(args: argparse.Namespace) -> int:
    from pathlib import Path

    from totem.events import Event, Notice, PermissionAsked
    from totem.mcp.config import load_mcp_config
    from totem.mcp.manager import McpManager
    from totem.policy.permission import Mode, PermissionService
    from totem.settings.config import load_config

    root = Path.cwd().resolve()
    config = load_mcp_config(root)
    ignored = [*config.ignored,
               *(i for i in load_config(root).ignored if i.startswith("MCP server"))]
    if ignored:
        print(f"! This folder is not trusted: ignored {'; '.join(ignored)}. "
              "Run `totem trust` here to use them.", file=sys.stderr)
    names: list[str] | None = None
    if args.mcp_command in ("login", "logout"):
        from totem.cli.mcp_login import login, logout

        return await (login(root, config, args) if args.mcp_command == "login"
                      else logout(config, args.name))
    if args.mcp_command == "test":
        if args.name not in config.servers:
            known = ", ".join(sorted(config.servers)) or "none"
            print(
                f"totem: no MCP server named '{args.name}' (configured: {known})", file=sys.stderr
            )
            return 2
        names = [args.name]
    if not config.servers:
        print("No MCP servers configured (.totem/mcp.json, or mcp: in the config).")
        return 0
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    mode: Mode = "yes" if args.yes else ("interactive" if interactive else "headless")
    permission = PermissionService(
        rules=load_config(root).rules, mode=mode, project=str(root), memory=_memory()
    )
    import asyncio

    pending: set[asyncio.Task[None]] = set()
    reader: list[Any] = []  # one terminal reader, made at the first question

    def emit(event: Event) -> None:
        if isinstance(event, Notice):
            print(f"! {event.text}", file=sys.stderr)
        elif isinstance(event, PermissionAsked):
            task = asyncio.ensure_future(_ask(permission, event, reader))
            pending.add(task)
            task.add_done_callback(pending.discard)

    manager = McpManager(root, config, permission=permission, emit=emit)
    if args.mcp_command == "list" and args.no_start:
        _show(manager)
        return 0
    manager.start_notices = False  # the listing shows each server's state
    try:
        await manager.start(names)
        rows = _show(manager, names)
    finally:
        await manager.aclose()
    return 0 if all(r.state in ("ready", "disabled") for r in rows) else 1


async def _ask(permission: Any, event: Any, reader: list[Any]) -> None:
    from totem.cli.lines import LineReader
    from totem.cli.render import ask_permission

    if not reader:
        reader.append(LineReader())
    reply = await ask_permission(event, reader[0])
    permission.reply(event.request_id, reply)


def _memory() -> Any:
    """The store's remembered rules ("always" replies), when the store can be opened."""
    try:
        from totem.session.service import default_store

        return default_store()
    except Exception:  # a missing or locked store only costs the remembered rules
        return None


def _show(manager: Any, names: list[str] | None = None) -> list[Any]:
    rows = [r for r in manager.status() if names is None or r.name in names]
    for row in rows:
        state = row.state
        if row.state == "refused":
            state += f" (allow it with --yes, or the rule mcp-start: {{{row.name}: allow}})"
        elif row.detail:
            state += f": {row.detail}"
        protocol = f"  (protocol {row.protocol})" if row.protocol else ""
        print(f"{row.name}  [{row.kind}]  {state}{protocol}")
        print(f"  {row.target}")
        if row.state == "ready":
            print(f"  {len(row.tools)} tools: {', '.join(row.tools) or '(none)'}")
        if row.log and row.state in ("failed", "crashed"):
            print(f"  log: {row.log}")
    return rows


def main(argv: list[str] | None = None) -> int:
    """`python -m totem.cli.mcp list|test NAME`: the same commands without `totem`."""
    parser = argparse.ArgumentParser(prog="totem")
    add_parser(parser.add_subparsers(dest="command", required=True))
    return mcp_command(parser.parse_args(["mcp", *(sys.argv[1:] if argv is None else argv)]))


if __name__ == "__main__":
    raise SystemExit(main())
