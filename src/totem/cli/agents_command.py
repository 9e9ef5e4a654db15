"""The work of `totem agents`: list, show, create, edit and delete agent definitions.

Kept apart from `cli/agents.py` so that building the parser for `totem --help` imports
neither the store nor the definitions.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from totem.agents.definitions import (
    AgentDef,
    AgentError,
    AgentSource,
    check_name,
    parse_max_steps,
    parse_tools,
    project_key,
    to_markdown,
)
from totem.agents.load import load_agents
from totem.agents.saved import delete_agent, get_saved_agent, save_agent
from totem.store.sqlite import SqliteStore

__all__ = ["run_agents_command"]
_SOURCES = {"builtin": "built in", "global": "saved, all projects", "project": "saved, project"}
_CLEAR = {"", "none", "default"}
_DESCRIPTION_WIDTH = 70


class _Refused(Exception):
    """The command cannot do what was asked; the message says why and what to do instead."""

def run_agents_command(args: argparse.Namespace, *, root: Path | None = None) -> int:
    """Run `totem agents ...` on the project at `root` (default: the working directory)."""
    from totem.session.service import default_store

    project = (root or Path.cwd()).resolve()
    store = default_store()
    try:
        if not isinstance(store, SqliteStore):
            raise _Refused("saved agents are kept in the SQLite store only for now; with a "
                           "PostgreSQL store, define agents as files in .totem/agents/")
        match args.agents_command:
            case None | "list":
                _list(project, store)
            case "show":
                _show(project, store, args.name)
            case "create":
                _create(project, store, args)
            case "edit":
                _edit(project, store, args)
            case "delete":
                _delete(project, store, args)
            case other:
                raise _Refused(f"unknown command 'agents {other}'")
    except (_Refused, AgentError) as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    return 0


def _loaded(root: Path, store: SqliteStore) -> dict[str, AgentDef]:
    problems: list[str] = []
    agents = load_agents(root, store, problems=problems)
    for problem in problems:
        print(f"totem: warning: {problem}", file=sys.stderr)
    return agents


def _source(agent: AgentDef, root: Path) -> str:
    if agent.source == "file" and agent.path is not None:
        path = Path(agent.path)
        return f"file {path.relative_to(root) if path.is_relative_to(root) else path}"
    return _SOURCES[agent.source]


def _list(root: Path, store: SqliteStore) -> None:
    agents = _loaded(root, store)
    rows = [(name, _source(agents[name], root), agents[name].description) for name in agents]
    rows.sort()
    if not rows:
        print("No agents.")
        return
    name_width = max(len(row[0]) for row in rows)
    source_width = max(len(row[1]) for row in rows)
    for name, source, description in rows:
        line = " ".join(description.split())
        if len(line) > _DESCRIPTION_WIDTH:
            line = line[: _DESCRIPTION_WIDTH - 3].rstrip() + "..."
        print(f"{name:<{name_width}}  {source:<{source_width}}  {line}")


def _show(root: Path, store: SqliteStore, name: str) -> None:
    agents = _loaded(root, store)
    agent = agents.get(name)
    if agent is None:
        raise _Refused(f"there is no agent named '{name}' (agents: {', '.join(sorted(agents))})")
    where = _source(agent, root)
    if agent.path is not None and agent.source != "file":
        where += f", {agent.path}"
    print(f"{name} ({where})\n")
    print(to_markdown(agent), end="")


def _scope(args: argparse.Namespace, root: Path) -> tuple[str | None, str]:
    if args.global_scope:
        return None, "for all projects"
    return project_key(root), f"for this project ({root})"


def _prompt(args: argparse.Namespace) -> str | None:
    if args.prompt is not None:
        return str(args.prompt)
    if args.prompt_file is None:
        return None
    try:
        if args.prompt_file == "-":
            return sys.stdin.read()
        return Path(args.prompt_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _Refused(f"cannot read the prompt file {args.prompt_file}: {exc}") from None


def _changes(args: argparse.Namespace) -> dict[str, Any]:
    """The fields given on the command line, checked, as AgentDef keyword arguments."""
    changes: dict[str, Any] = {}
    if args.description is not None:
        if not args.description.strip():
            raise _Refused("the description cannot be empty: the model chooses agents by it")
        changes["description"] = args.description.strip()
    if args.tools is not None:
        changes["tools"] = parse_tools(args.tools)
    if args.maxsteps is not None:
        clear = args.maxsteps.strip().lower() in _CLEAR
        changes["max_steps"] = None if clear else parse_max_steps(args.maxsteps)
    if args.agent_model is not None:
        clear = args.agent_model.strip().lower() in _CLEAR
        changes["model"] = None if clear else args.agent_model.strip()
    prompt = _prompt(args)
    if prompt is not None:
        if not prompt.strip():
            raise _Refused("the prompt cannot be empty")
        changes["prompt"] = prompt.strip()
    return changes


def _create(root: Path, store: SqliteStore, args: argparse.Namespace) -> None:
    name = check_name(args.name)
    project, label = _scope(args, root)
    if get_saved_agent(store.db, name, project=project) is not None:
        raise _Refused(
            f"an agent named '{name}' is already saved {label}; "
            f"change it with: totem agents edit {name}" + (" --global" if project is None else "")
        )
    changes = _changes(args)
    missing = [
        flag
        for flag, key in (("--description", "description"), ("--prompt", "prompt"))
        if key not in changes
    ]
    if missing:
        raise _Refused(f"creating an agent needs {' and '.join(missing)}")
    source: AgentSource = "global" if project is None else "project"
    save_agent(store.db, AgentDef(name=name, source=source, **changes), project=project)
    print(f"Saved the agent '{name}' {label}.")
    _note_winner(root, store, name, source)


def _edit(root: Path, store: SqliteStore, args: argparse.Namespace) -> None:
    project, label = _scope(args, root)
    agent = get_saved_agent(store.db, args.name, project=project)
    if agent is None:
        raise _Refused(_not_saved(root, store, args.name, project))
    changes = _changes(args)
    if not changes:
        raise _Refused(
            "nothing to change: give --description, --tools, --maxsteps, --model, --prompt "
            "or --prompt-file"
        )
    save_agent(store.db, dataclasses.replace(agent, **changes), project=project)
    print(f"Changed the agent '{agent.name}' saved {label}: {', '.join(sorted(changes))}.")
    _note_winner(root, store, agent.name, agent.source)


def _delete(root: Path, store: SqliteStore, args: argparse.Namespace) -> None:
    project, label = _scope(args, root)
    if not delete_agent(store.db, args.name, project=project):
        raise _Refused(_not_saved(root, store, args.name, project))
    print(f"Deleted the agent '{args.name}' saved {label}.")
    now = _loaded(root, store).get(args.name)
    if now is not None:
        print(f"'{args.name}' is now the agent from: {_source(now, root)}.")


def _note_winner(root: Path, store: SqliteStore, name: str, source: AgentSource) -> None:
    """Say so when another place replaces the agent just saved, in this project."""
    winner = _loaded(root, store).get(name)
    if winner is not None and winner.source != source:
        print(
            f"Note: in this project '{name}' comes from {_source(winner, root)}, "
            "which replaces the saved one."
        )


def _not_saved(root: Path, store: SqliteStore, name: str, project: str | None) -> str:
    """Why there is nothing saved to change, and what to do instead."""
    other = project_key(root) if project is None else None
    if get_saved_agent(store.db, name, project=other) is not None:
        flag = "without --global" if project is None else "with --global"
        where = "this project" if project is None else "all projects"
        return f"'{name}' is saved for {where}; run the command again {flag}"
    agent = _loaded(root, store).get(name)
    if agent is not None and agent.source == "builtin":
        return (
            f"'{name}' is a built-in agent and cannot be changed. To replace it, save an "
            f"agent with the same name: totem agents create {name} --description ... "
            "--prompt ..."
        )
    if agent is not None and agent.source == "file":
        return f"'{name}' is defined by the file {agent.path}; edit or delete that file"
    scope = "for all projects" if project is None else "for this project"
    return f"there is no agent named '{name}' saved {scope}"
