"""`totem acp`: totem as an Agent Client Protocol agent on stdin/stdout, for an editor to
start (Zed's `agent_servers`, JetBrains, Neovim plugins). The folder of each session is the
one the editor gives. The ACP SDK is imported when the command runs, not at start-up.
"""

from __future__ import annotations

import argparse

from totem.cli.exit_codes import EXIT_OK

TYPE_CHECKING = False  # typing is not imported for `totem --help`
if TYPE_CHECKING:
    from typing import Any

__all__ = ["acp_command", "add_parser"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "acp", help="serve an editor over the Agent Client Protocol (stdio)")
    parser.set_defaults(handler=acp_command)
    return parser


def acp_command(args: argparse.Namespace) -> int:
    import asyncio

    from totem.acp.server import serve_stdio

    try:
        asyncio.run(serve_stdio())
    except KeyboardInterrupt:
        pass
    return EXIT_OK
