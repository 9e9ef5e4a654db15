"""`totem tools`: every tool a run in this folder could offer the model, on or off, and why.

    read: on — built in
    websearch: off — no `tools.websearch.url` (SearXNG), nor ...
    slack: off — no `integrations.slack.token`

`--json` prints the same as one JSON list of {name, on, why}. Exit code 2 when the
configuration cannot be read.
"""

from __future__ import annotations

import argparse
import sys

from totem.cli.exit_codes import EXIT_OK, EXIT_USAGE

TYPE_CHECKING = False  # typing is not imported for `totem --help` or `run`
if TYPE_CHECKING:
    from typing import Any

__all__ = ["add_parsers", "tools_command"]


def add_parsers(subparsers: Any) -> None:
    """Add `tools` to the `totem` sub-command parsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "tools", help="every tool, on or off, and why")
    parser.add_argument("--json", action="store_true", help="print one JSON list")
    parser.set_defaults(handler=tools_command)


def tools_command(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from totem.session.service import SessionService
    from totem.settings.errors import ConfigError

    try:
        service = SessionService(Path.cwd(), mode="headless")
    except ConfigError as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        agents = {n: d.description for n, d in service.agent_definitions().items()}
        states = service.toolset.states(agents=agents)
    finally:
        service.store.close()
    for notice in service.notices:  # what an untrusted project's config would turn on
        print(f"totem: {notice}", file=sys.stderr)
    if args.json:
        print(json.dumps([{"name": s.name, "on": s.on, "why": s.why} for s in states]))
        return EXIT_OK
    for state in states:
        print(f"{state.name}: {'on' if state.on else 'off'} — {state.why}")
    return EXIT_OK
