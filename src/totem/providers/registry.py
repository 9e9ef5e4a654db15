"""From configuration to a provider: kinds map to adapters, imported only when used."""

from __future__ import annotations

import importlib

from totem.providers.base import Provider
from totem.settings.config import Config, ConfigError, ProviderConfig

__all__ = ["OPENAI_KINDS", "make_provider", "resolve_model"]

OPENAI_KINDS = frozenset({"openai", "openai-compatible", "llamacpp", "lmstudio", "vllm", "other"})
# kind -> module under totem.providers with `from_config(cfg, key)`; imported only when used
_ADAPTERS = {
    "anthropic": "anthropic",
    "gemini": "gemini",
    "ollama": "ollama",
    "bedrock": "bedrock",
    "litellm": "litellm",
}


def resolve_model(config: Config, spec: str | None) -> tuple[ProviderConfig, str]:
    """`provider/model` (or just `model` when one provider is configured) -> its config."""
    spec = spec or config.model
    if not spec:
        if not config.providers:
            raise ConfigError(
                "No model is configured. Add a provider to ~/.config/totem/config.yaml or "
                ".totem/config.yaml, e.g.\n"
                "  model: local/qwen2.5-coder\n"
                "  providers:\n"
                "    local: {kind: openai, base_url: 'http://127.0.0.1:8080/v1'}\n"
                "or pass --model PROVIDER/MODEL."
            )
        raise ConfigError("No model chosen: pass --model PROVIDER/MODEL or set `model:`.")
    name, _, model = spec.partition("/")
    if name in config.providers and model:
        return config.providers[name], model
    if len(config.providers) == 1 and name not in config.providers:
        only = next(iter(config.providers.values()))
        return only, spec
    known = ", ".join(sorted(config.providers)) or "none"
    raise ConfigError(f"Unknown provider in '{spec}'. Configured providers: {known}.")


def make_provider(cfg: ProviderConfig) -> Provider:
    key: str | None = None
    if cfg.origin == "project" and cfg.key is None:
        from totem.settings.config_trust import IMPLICIT_KEY_KINDS

        if cfg.kind in IMPLICIT_KEY_KINDS:  # its adapter would fall back to the user's key
            raise ConfigError(f"provider '{cfg.name}' is defined by the project: it needs a key "
                              "of its own (key: ${env:VAR}), it never takes yours")
    if cfg.key is not None:
        key = cfg.key.reveal()
        if key is None:
            raise ConfigError(f"provider '{cfg.name}': no key: {cfg.key.source()}; set the "
                              f"variable, or add the key with `totem providers add ... "
                              f"--name {cfg.name}`.")
    if cfg.kind in OPENAI_KINDS:
        if not cfg.base_url:
            raise ConfigError(f"provider '{cfg.name}': kind {cfg.kind} needs a base_url")
        from totem.providers.openai_chat import OpenAIChatProvider

        return OpenAIChatProvider(
            name=cfg.name,
            base_url=cfg.base_url,
            api_key=key,
            headers={str(k): str(v) for k, v in (cfg.options.get("headers") or {}).items()},
            options=cfg.options,
        )
    if cfg.kind == "scripted":
        from totem.testing.scripted import ScriptedProvider

        script = cfg.options.get("script")
        if not script:
            raise ConfigError(f"provider '{cfg.name}': kind scripted needs options.script")
        return ScriptedProvider.from_file(str(script), name=cfg.name)
    adapter = _ADAPTERS.get(cfg.kind)
    if adapter is not None:
        module = importlib.import_module(f"totem.providers.{adapter}")
        provider: Provider = module.from_config(cfg, key)
        return provider
    raise ConfigError(f"provider '{cfg.name}': unknown kind '{cfg.kind}'")
