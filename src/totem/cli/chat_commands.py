"""The chat's own commands, handled in the terminal and never sent to the model:

    /undo [N]   put back the files of the last request(s)     /redo [N]   make them again
    /model [PROVIDER/MODEL]   show or switch the model of the next turns
    /sessions   list this project's sessions and pick one to resume
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from totem.cli.lines import LineReader
from totem.session.service import SessionService
from totem.settings.config import ConfigError
from totem.store.base import SessionInfo

__all__ = ["LOCAL_COMMANDS", "MODEL_CHOICES", "ChatState", "complete_word", "handle_local",
           "model_choices"]

LOCAL_COMMANDS = ("/model", "/redo", "/sessions", "/undo")
MODEL_CHOICES: list[str] = []  # what /model completes, filled once the configuration is read


@dataclass(slots=True)
class ChatState:
    """What the chat's next turn uses: the session and the model (None: the session's)."""

    session: SessionInfo
    model: str | None
    label: str


def model_choices(service: SessionService) -> list[str]:
    """PROVIDER/MODEL of every model the configuration names (for completion)."""
    found = [service.config.model] if service.config.model else []
    for name, pconf in service.config.providers.items():
        found += [f"{name}/{model}" for model in pconf.models]
    return sorted(set(found))


def complete_word(word: str, *, line: str, root: Path) -> list[str]:
    """Tab completion of a word that is not a command: a model after /model, a path after @."""
    if line.startswith("/model ") and not word.startswith("@"):
        return [m for m in MODEL_CHOICES if m.startswith(word)]
    if not word.startswith("@"):
        return []
    folder, _, stem = word[1:].rpartition("/")
    base = (root / folder).resolve()
    if base != root.resolve() and root.resolve() not in base.parents:
        return []
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return []
    prefix = f"@{folder}/" if folder else "@"
    return [prefix + e.name + ("/" if e.is_dir() else "") for e in entries
            if e.name.startswith(stem) and not e.name.startswith(".")]


async def handle_local(
    text: str, *, service: SessionService, state: ChatState, reader: LineReader
) -> bool:
    """Do `text` when it is one of the chat's own commands; False when it is not one."""
    command, _, rest = text.partition(" ")
    rest = rest.strip()
    if command in ("/undo", "/redo"):
        _undo(command[1:], rest, service=service, state=state)
    elif command == "/model":
        await _model(rest, service=service, state=state)
    elif command == "/sessions":
        await _sessions(service=service, state=state, reader=reader)
    else:
        return False
    return True


def _undo(direction: str, rest: str, *, service: SessionService, state: ChatState) -> None:
    from totem.session.undo import redo, undo

    if rest and not rest.isdigit():
        print(f"/{direction} takes a number of requests, e.g. /{direction} 2")
        return
    act = undo if direction == "undo" else redo
    result = act(service.store, session_id=state.session.id, root=service.root,
                 steps=int(rest) if rest else 1)
    print(result.summary, flush=True)


async def _model(spec: str, *, service: SessionService, state: ChatState) -> None:
    if not spec:
        known = ", ".join(model_choices(service)) or "none configured"
        print(f"model: {state.label} (configured: {known}); /model PROVIDER/MODEL switches")
        return
    try:
        agent = service.agent(spec)
    except ConfigError as exc:
        print(f"Cannot switch: {exc}")
        return
    served = await _served(service, agent.label)
    if served is not None and agent.model not in served:
        provider = agent.label.partition("/")[0]
        print(f"Cannot switch: {provider} serves no model '{agent.model}' "
              f"(it serves: {', '.join(served[:20]) or 'none'}).")
        return
    state.model = state.label = agent.label
    print(f"model: {agent.label} from the next turn")


async def _served(service: SessionService, label: str) -> list[str] | None:
    """The models the provider of `label` lists; None when it cannot say."""
    import asyncio

    from totem.providers.listing import list_model_infos

    pconf = service.config.providers.get(label.partition("/")[0])
    if pconf is None:
        return None
    try:
        infos = await asyncio.wait_for(list_model_infos(pconf), timeout=10)
    except Exception:  # a provider that cannot list: the switch is not refused for that
        return None
    return [info.id for info in infos]


async def _sessions(*, service: SessionService, state: ChatState, reader: LineReader) -> None:
    from totem.cli.history import session_usage

    found = [s for s in service.store.list_sessions(str(service.root), limit=20)]
    if not found:
        print("No session in this project yet.")
        return
    for number, info in enumerate(found, start=1):
        when = time.strftime("%m-%d %H:%M", time.localtime(info.updated))
        tokens = sum(session_usage(service.store, info.id))
        mark = "*" if info.id == state.session.id else " "
        print(f"{mark}{number:>3}  {when}  {tokens:>8,} tok  {info.title or '(untitled)'}")
    answer = (await reader.read("resume which? (number, Enter keeps this one) ",
                                fresh=True)).strip()
    if not answer:
        return
    if not answer.isdigit() or not 1 <= int(answer) <= len(found):
        print(f"No session numbered {answer}.")
        return
    state.session = found[int(answer) - 1]
    state.label = service.model_label(state.session, state.model)
    print(f"resumed {state.session.id} · {state.session.title or '(untitled)'}")
