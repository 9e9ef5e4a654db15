"""`totem hooks`: the person's hooks a run in this folder would run, by event.

    pre_tool [bash]  ~/bin/check.sh  (user, timeout 60 s)
    session_start  ./scripts/env.sh  (project, timeout 60 s)

A project's hooks count only once its folder is trusted; until then they are listed as
ignored. `--json` prints one JSON list of {event, matcher, command, timeout, source}.
"""

from __future__ import annotations

import argparse
import sys

from totem.cli.exit_codes import EXIT_OK, EXIT_USAGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["add_parsers", "hooks_command"]


def add_parsers(subparsers: Any) -> None:
    """Add `hooks` to the `totem` sub-command parsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "hooks", help="your commands that run on the agent's events")
    parser.add_argument("--json", action="store_true", help="print one JSON list")
    parser.set_defaults(handler=hooks_command)


def hooks_command(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from totem.settings.config import load_config
    from totem.settings.errors import ConfigError

    try:
        config = load_config(Path.cwd().resolve())
    except ConfigError as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return EXIT_USAGE
    ignored = [item for item in config.ignored if " hook: " in item]
    if args.json:
        print(json.dumps([{"event": h.event, "matcher": h.matcher, "command": h.command,
                           "timeout": h.timeout, "source": h.source} for h in config.hooks]))
        return EXIT_OK
    if not config.hooks:
        print("No hooks. Add them under `hooks:` in ~/.config/totem/config.yaml "
              "(see the README's Hooks section).")
    for hook in config.hooks:
        matcher = f" [{hook.matcher}]" if hook.matcher else ""
        print(f"{hook.event}{matcher}  {hook.command}  "
              f"({hook.source}, timeout {hook.timeout:g} s)")
    for item in ignored:
        print(f"ignored until this folder is trusted (`totem trust`): {item}")
    return EXIT_OK
