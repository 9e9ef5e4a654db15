"""The integrations' settings: each one is off until its section says enough to work.

    integrations:
      slack: {token: "${env:SLACK_BOT_TOKEN}", base_url: "https://slack.com/api"}
      tts: {engine: espeak-ng, voice: en, play: false}      # or engine: piper, model: FILE
      image: {base_url: "https://api.openai.com/v1", key: "${env:OPENAI_API_KEY}",
              model: gpt-image-1, size: 1024x1024}
      agents: true                                          # agent_list/create/edit/delete
    tools:
      websearch: {backend: searxng, url: "http://127.0.0.1:8888"}
      websearch: {backend: brave, key: "${env:BRAVE_API_KEY}"}     # or tavily

`Integrations.secrets()` lists every key, so that the run's redactor can mask them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from totem.settings.errors import ConfigError
from totem.settings.secret import Secret

__all__ = [
    "SEARCH_BACKENDS",
    "ImageSettings",
    "Integrations",
    "SearchBackend",
    "SearchSettings",
    "SlackSettings",
    "TtsSettings",
    "parse_integrations",
]

SearchBackend: TypeAlias = Literal["searxng", "brave", "tavily"]
SEARCH_BACKENDS: dict[str, str] = {  # backend -> its documented endpoint
    "searxng": "",
    "brave": "https://api.search.brave.com/res/v1/web/search",
    "tavily": "https://api.tavily.com/search",
}
SLACK_API = "https://slack.com/api"


@dataclass(frozen=True, slots=True)
class SlackSettings:
    token: Secret
    base_url: str = SLACK_API


@dataclass(frozen=True, slots=True)
class TtsSettings:
    engine: Literal["espeak-ng", "piper"] = "espeak-ng"
    voice: str | None = None  # espeak-ng's -v
    model: str | None = None  # Piper's voice model (.onnx)
    play: bool = False  # also play the file on the speakers


@dataclass(frozen=True, slots=True)
class ImageSettings:
    base_url: str
    key: Secret | None = None
    model: str = "gpt-image-1"
    size: str = "1024x1024"


@dataclass(frozen=True, slots=True)
class SearchSettings:
    backend: SearchBackend
    url: str
    key: Secret | None = None


@dataclass(frozen=True, slots=True)
class Integrations:
    """What is configured; None (or False) is off."""

    slack: SlackSettings | None = None
    tts: TtsSettings | None = None
    image: ImageSettings | None = None
    agents: bool = False
    search: SearchSettings | None = None

    def secrets(self) -> list[Secret]:
        found = [self.slack.token if self.slack else None,
                 self.image.key if self.image else None,
                 self.search.key if self.search else None]
        return [s for s in found if s is not None]


def _text(spec: dict[str, Any], key: str) -> str | None:
    value = spec.get(key)
    return str(value).strip() or None if value is not None else None


def _slack(spec: dict[str, Any]) -> SlackSettings | None:
    token = _text(spec, "token")
    if token is None:
        return None
    return SlackSettings(Secret(token), (_text(spec, "base_url") or SLACK_API).rstrip("/"))


def _tts(spec: Any) -> TtsSettings | None:
    if spec is None or spec is False:
        return None
    spec = {} if spec is True else spec
    engine = _text(spec, "engine") or "espeak-ng"
    if engine not in ("espeak-ng", "piper"):
        raise ConfigError(f"integrations.tts.engine: expected espeak-ng or piper, not {engine!r}")
    model = _text(spec, "model")
    if engine == "piper" and model is None:
        raise ConfigError("integrations.tts.model: Piper needs a voice model (a .onnx file)")
    return TtsSettings("piper" if engine == "piper" else "espeak-ng", _text(spec, "voice"),
                       model, bool(spec.get("play", False)))


def _image(spec: dict[str, Any]) -> ImageSettings | None:
    base_url = _text(spec, "base_url")
    if base_url is None:
        return None
    key = _text(spec, "key")
    return ImageSettings(base_url.rstrip("/"), Secret(key) if key else None,
                         _text(spec, "model") or "gpt-image-1", _text(spec, "size") or "1024x1024")


def _search(spec: dict[str, Any]) -> SearchSettings | None:
    backend = _text(spec, "backend") or "searxng"
    if backend not in SEARCH_BACKENDS:
        raise ConfigError(f"tools.websearch.backend: expected searxng, brave or tavily, "
                          f"not {backend!r}")
    url = _text(spec, "url") or SEARCH_BACKENDS[backend]
    key = _text(spec, "key")
    if not url or (backend != "searxng" and key is None):
        return None
    chosen: SearchBackend = "brave" if backend == "brave" else \
        "tavily" if backend == "tavily" else "searxng"
    return SearchSettings(chosen, url.rstrip("/"), Secret(key) if key else None)


def parse_integrations(section: dict[str, Any], websearch: dict[str, Any]) -> Integrations:
    """The settings from the merged `integrations:` section and `tools.websearch`."""
    return Integrations(
        slack=_slack(section.get("slack") or {}),
        tts=_tts(section.get("tts")),
        image=_image(section.get("image") or {}),
        agents=bool(section.get("agents", False)),
        search=_search(websearch),
    )
