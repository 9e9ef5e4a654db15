"""`totem trust [PATH]`, `--list`, `--revoke`; and the terminal's trust question.

A folder's own `.totem` config (allow rules, providers, MCP servers, a longer step limit...)
counts only once the folder is trusted: see totem.settings.trust.
"""

from __future__ import annotations

import argparse
import sys

from totem.cli.exit_codes import EXIT_OK, EXIT_USAGE

TYPE_CHECKING = False  # typing is not imported for `totem --help`
if TYPE_CHECKING:
    # `totem --help` builds this parser: nothing more is imported for it
    from pathlib import Path
    from typing import Any, TextIO

__all__ = ["add_parser", "ask_trust", "settle_trust", "trust_command"]



def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `trust` to the `totem` sub-command parsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "trust", help="let a folder's own .totem config apply (allow rules, providers, MCP...)")
    parser.add_argument("path", nargs="?", default=".", help="the folder (default: this one)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--list", action="store_true", help="list the trusted folders")
    group.add_argument("--revoke", action="store_true", help="stop trusting the folder")
    return parser


def describe(root: Path, items: list[str]) -> str:
    lines = "\n".join(f"  - {item}" for item in items)
    return (f"The project config in {root} would change what totem does:\n{lines}\n"
            "Until you trust this folder, these are ignored (its deny and ask rules still apply).")


def trust_command(args: argparse.Namespace) -> int:
    from totem.session.trust_items import trust_items
    from totem.settings.config import ConfigError
    from totem.settings.trust import forget, remember, trust_file, trusted_folders

    if args.list:
        folders = trusted_folders()
        for folder, current in folders.items():
            print(folder if current else f"{folder}  (its config changed since: asks again)")
        if not folders:
            print(f"No folder is trusted ({trust_file()}).")
        return EXIT_OK
    from pathlib import Path

    root = Path(args.path).resolve()
    if not root.is_dir():
        print(f"totem: {root} is not a folder", file=sys.stderr)
        return EXIT_USAGE
    if args.revoke:
        print(f"{root}: no longer trusted." if forget(root) else f"{root} was not trusted.")
        return EXIT_OK
    try:
        items = trust_items(root)
    except ConfigError as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return EXIT_USAGE
    remember(root)
    if items:
        print(describe(root, items).split("\nUntil")[0])
    print(f"{root}: trusted (remembered in {trust_file()} until its .totem config changes).")
    return EXIT_OK


def ask_trust(root: Path, items: list[str], *, stdin: TextIO, stdout: TextIO) -> bool:
    """The terminal question; True (and remembered) on yes."""
    from totem.settings.trust import remember

    stdout.write(describe(root, items) + "\nTrust this folder? [y/N] ")
    stdout.flush()
    answer = stdin.readline().strip().lower()
    if answer in ("y", "yes"):
        remember(root)
        stdout.write("Trusted: remembered until its .totem config changes.\n")
        return True
    stdout.write("Not trusted: running with your own config only.\n")
    return False


def settle_trust(root: Path, *, trust: bool, interactive: bool) -> None:
    """Before a run: `--trust` trusts; a terminal asks once when the project config would
    change anything and the folder is not trusted yet. ConfigError for a broken file."""
    from totem.settings.trust import is_trusted, remember

    if is_trusted(root):
        return
    if trust:
        remember(root)
        return
    if not interactive:
        return
    from totem.session.trust_items import trust_items

    items = trust_items(root)
    if items:
        ask_trust(root, items, stdin=sys.stdin, stdout=sys.stdout)
