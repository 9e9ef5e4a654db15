"""`totem serve [--port N] [--host 127.0.0.1]`: the web UI for the project in this folder.

Prints the URL to open, with its token (as Jupyter does); every request needs the token.
Ctrl-C stops the server and every run in progress. This module imports only argparse at
load time: the server package is imported when the command runs.
"""

from __future__ import annotations

import argparse
import sys

from totem.cli.exit_codes import EXIT_OK, EXIT_USAGE

TYPE_CHECKING = False  # typing is not imported for `totem --help`
if TYPE_CHECKING:
    from typing import Any

__all__ = ["add_parser", "serve_command"]


DEFAULT_PORT = 8765
PORT_TRIES = 10  # without --port: the default port, else one of the next ones


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `serve` to the `totem` sub-command parsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve", help="the web UI for this project, on localhost")
    _arguments(parser)
    parser.set_defaults(handler=serve_command)
    return parser


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=None,
                        help=f"the port (default {DEFAULT_PORT}, or the next free one; "
                             "0: any free port)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="the address to listen on (default 127.0.0.1, this computer only)")
    parser.add_argument("--open", action="store_true", help="open the page in a browser")
    parser.add_argument("--new-token", action="store_true",
                        help="make a new token (the old one stops working); the token is "
                             "otherwise the same at every start")


def serve_command(args: argparse.Namespace) -> int:
    import asyncio

    from totem.server import warning_for
    from totem.settings.config import ConfigError

    warning = warning_for(args.host)
    if warning:
        print(f"\n{'!' * 78}\n{warning}\n{'!' * 78}\n", file=sys.stderr, flush=True)
    if args.port is not None and not 0 <= args.port <= 65535:
        print(f"totem: --port must be between 0 and 65535, not {args.port}", file=sys.stderr)
        return EXIT_USAGE
    from totem.server.limits import Limits

    try:
        args.limits = Limits.from_environment()
    except ValueError as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return EXIT_USAGE
    ports = [args.port] if args.port is not None else [
        DEFAULT_PORT + i for i in range(PORT_TRIES)]
    try:
        asyncio.run(_serve(args, ports))
    except OSError as exc:
        where = f"{args.host}:{ports[-1] if len(ports) == 1 else f'{ports[0]}-{ports[-1]}'}"
        print(f"totem: cannot listen on {where}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except ConfigError as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


async def _serve(args: argparse.Namespace, ports: list[int]) -> None:
    """Serve on the first of `ports` that is free, until SIGINT or SIGTERM."""
    import asyncio
    import errno
    import signal
    from pathlib import Path

    from totem.server import serve
    from totem.server.token import stable_token

    token = stable_token(rotate=args.new_token)

    def ready(url: str) -> None:
        print(f"totem serve: {Path.cwd()}\n  open {url}\n(Ctrl-C stops it)", flush=True)
        if args.open:
            import webbrowser

            webbrowser.open(url)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    for port in ports:
        try:
            await serve(Path.cwd(), host=args.host, port=port, on_ready=ready, stop=stop,
                        token=token, limits=args.limits)
            return
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE or port == ports[-1]:
                raise


def main(argv: list[str] | None = None) -> int:
    """`python -m totem.cli.serve` (the same as `totem serve`)."""
    parser = argparse.ArgumentParser(prog="totem serve", description=__doc__.splitlines()[0])
    _arguments(parser)
    return serve_command(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
