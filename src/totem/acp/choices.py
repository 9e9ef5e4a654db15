"""What the editor lets the person choose per session: the mode and the model.

The modes are the session service's (policy/modes.py): default ("Normal"), plan (reading
only; the plan is offered for approval when the answer ends) and accept_edits (file changes
made without asking). The models are the configured ones: the default `model:` and every
`models:` entry of each provider. Both go out as ACP modes (`session/set_mode`) and as config
options (`session/set_config_option`, categories "mode" and "model"), which newer clients
show as pickers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from acp.schema import (
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from totem.policy.modes import ModeInfo
from totem.settings.config import Config

__all__ = ["ModeChoice", "config_options", "mode_state", "models_of", "modes_of"]


@dataclass(frozen=True, slots=True)
class ModeChoice:
    id: str
    name: str
    description: str = ""


def modes_of(modes: Sequence[ModeInfo]) -> list[ModeChoice]:
    """The session service's modes as the editor is offered them."""
    return [ModeChoice(m.name, m.title, m.description) for m in modes]


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
