"""`totem agents`: the agents of this project, and the saved ones to create, edit or delete.

    totem agents [list]                  every agent: name, where it comes from, description
    totem agents show NAME               one agent: where it comes from, then it as a file
    totem agents create NAME [--global] --description TEXT [--tools a,b] [--maxsteps N]
                         [--model PROVIDER/MODEL] (--prompt TEXT | --prompt-file FILE)
    totem agents edit NAME [--global] [the same flags; only the fields given change]
    totem agents delete NAME [--global]

Saved agents live in the store, for this project or (`--global`) for all projects. Built-in
agents and the files in .totem/agents are read-only here. The last place wins for a name:
built in, saved for all projects, saved for this project, .totem/agents/NAME.md.
Exit code: 0 when done, 1 when refused or failed.
"""

from __future__ import annotations

import argparse

TYPE_CHECKING = False  # typing is not imported for `totem --help`
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["add_parser", "agents_command"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `agents` and its commands to the `totem` parser's subparsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "agents", help="list, show, create, edit and delete agent definitions"
    )
    commands = parser.add_subparsers(dest="agents_command")
    commands.add_parser("list", help="every agent this project can use (the default)")
    show = commands.add_parser("show", help="one agent, as a Markdown file")
    show.add_argument("name")
    create = commands.add_parser("create", help="save a new agent")
    edit = commands.add_parser("edit", help="change a saved agent (only the fields given)")
    delete = commands.add_parser("delete", help="delete a saved agent")
    for sub in (create, edit, delete):
        sub.add_argument("name")
        sub.add_argument(
            "--global",
            dest="global_scope",
            action="store_true",
            help="the agent saved for all projects (default: for this project)",
        )
    for sub in (create, edit):
        sub.add_argument("--description", help="what it does; the model chooses agents by it")
        sub.add_argument("--tools", help="tool names, comma-separated, or 'all' (default)")
        sub.add_argument("--maxsteps", help="its step limit ('none': the session's)")
        sub.add_argument(
            "--model", dest="agent_model", help="PROVIDER/MODEL ('none': the conversation's)"
        )
        text = sub.add_mutually_exclusive_group()
        text.add_argument("--prompt", help="its instructions")
        text.add_argument("--prompt-file", help="a file with its instructions ('-': stdin)")
    return parser

def agents_command(args: argparse.Namespace, *, root: Path | None = None) -> int:
    """Run `totem agents ...`; the store and the definitions load only now."""
    from totem.cli.agents_command import run_agents_command

    return run_agents_command(args, root=root)
