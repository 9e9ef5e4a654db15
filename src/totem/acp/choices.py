"""What the editor lets the person choose per session: the mode and the model.

Modes come from the session service when it has them: a service with `modes()` (each with
`id`, `name`, `description`) and `set_mode(id)` offers its own list (plan mode, when it
lands, is such a list); a service without gives the one default mode. Models are the
configured ones: the default `model:` and every `models:` entry of each provider. Both go
out as ACP modes (`session/set_mode`) and as config options (`session/set_config_option`,
categories "mode" and "model"), which newer clients show as pickers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from acp.schema import (
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from totem.settings.config import Config

__all__ = ["DEFAULT_MODE", "ModeChoice", "config_options", "mode_state", "models_of",
           "modes_of"]


@dataclass(frozen=True, slots=True)
class ModeChoice:
    id: str
    name: str
    description: str = ""


DEFAULT_MODE = ModeChoice(
    "default", "Default",
    "Reads freely; asks before it edits files or runs commands, as your rules say.")


class _Mode(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...


@runtime_checkable
class ModalService(Protocol):
    """A session service that has modes of its own."""

    def modes(self) -> Sequence[_Mode]: ...

    def set_mode(self, mode_id: str) -> None: ...


def modes_of(service: object) -> list[ModeChoice]:
    if isinstance(service, ModalService):
        found = [ModeChoice(m.id, m.name, m.description) for m in service.modes()]
        if found:
            return found
    return [DEFAULT_MODE]


def models_of(config: Config, current: str) -> list[str]:
    """The configured models as `provider/model`, the current one first among them."""
    found = [current] if current else []
    if config.model:
        found.append(config.model)
    for name, provider in config.providers.items():
        found.extend(f"{name}/{model}" for model in provider.models)
    return list(dict.fromkeys(found))


def mode_state(modes: list[ModeChoice], current: str) -> SessionModeState:
    return SessionModeState(current_mode_id=current, available_modes=[
        SessionMode(id=m.id, name=m.name, description=m.description or None) for m in modes])


def config_options(modes: list[ModeChoice], mode: str, models: list[str],
                   model: str) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    options: list[SessionConfigOptionSelect | SessionConfigOptionBoolean] = [
        SessionConfigOptionSelect(
        type="select", id="mode", name="Mode", category="mode", current_value=mode,
        options=[SessionConfigSelectOption(value=m.id, name=m.name,
                                           description=m.description or None) for m in modes])]
    if models:
        options.append(SessionConfigOptionSelect(
            type="select", id="model", name="Model", category="model", current_value=model,
            options=[SessionConfigSelectOption(value=m, name=m) for m in models]))
    return options
