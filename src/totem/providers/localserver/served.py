"""One configured model as its server serves it: profile, real window and sampling.

The glue between the configuration, the server's own account of itself (`serverinfo`),
the model profiles and the sampling (`sampling`); the session service calls it once per
agent. A hosted provider is never asked anything, nor a local one with `probe: false`
among its options.
"""

from __future__ import annotations

from dataclasses import dataclass

from totem.providers.catalog.profiles import ModelProfile, profile_for_served
from totem.providers.localserver.sampling import Sampling, sampling_for
from totem.providers.localserver.serverinfo import ServerFacts, is_local, probe, probe_soon
from totem.settings.config import ConfigError, ProviderConfig
from totem.smallmodel.levers import DEFAULT_LEVERS, Levers, levers_from

__all__ = ["ServedModel", "ask_soon", "served_model"]


@dataclass(frozen=True, slots=True)
class ServedModel:
    profile: ModelProfile
    facts: ServerFacts | None  # what the server said; None: hosted, or it said nothing
    sampling: Sampling
    read_ahead: bool = False  # read the files a request concerns before the first step
    levers: Levers = DEFAULT_LEVERS  # which helps of a small model's run are on


def _asked(pconf: ProviderConfig) -> bool:
    return is_local(pconf.kind, pconf.base_url) and pconf.options.get("probe") is not False


def ask_soon(pconf: ProviderConfig, model: str) -> None:
    """Start asking the server of `pconf` about `model` (when it is asked at all), so that
    `served_model` finds the answer ready."""
    if _asked(pconf):
        probe_soon(pconf.kind, pconf.base_url, model)


def served_model(pconf: ProviderConfig | None, model: str) -> ServedModel:
    """The profile (its size by the server's parameter count, its family by the served
    name, else by what the server serves: `profiles.profile_for_served`), the server's
    facts and the sampling of `model` on the provider `pconf` (None: a provider given
    directly, as tests do)."""
    if pconf is None:
        profile = profile_for_served(model)
        return ServedModel(profile, None, sampling_for(profile, None, local=False))
    local = is_local(pconf.kind, pconf.base_url)
    facts = probe(pconf.kind, pconf.base_url, model) if _asked(pconf) else None
    profile = (profile_for_served(model, facts.names, params=facts.params, family=facts.family)
               if facts else profile_for_served(model))
    entry = pconf.models.get(model)
    settings = {**pconf.options, **(entry if isinstance(entry, dict) else {})}
    try:
        sampling = sampling_for(profile, facts, local=local, settings=settings)
    except ValueError as exc:
        raise ConfigError(f"provider '{pconf.name}', model '{model}': {exc}") from None
    read_ahead = settings.get("read_ahead", profile.small and local)
    if not isinstance(read_ahead, bool):
        raise ConfigError(f"provider '{pconf.name}', model '{model}': `read_ahead` must be "
                          f"true or false, not {read_ahead!r}")
    try:
        levers = levers_from(settings.get("assist"))
    except ValueError as exc:
        raise ConfigError(f"provider '{pconf.name}', model '{model}': {exc}") from None
    return ServedModel(profile, facts, sampling, read_ahead, levers)
