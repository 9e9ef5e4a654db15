"""LiteLLM proxy: a provider kind of its own, on the proxy's OpenAI-compatible API.

    providers:
      gateway: {kind: litellm, base_url: "http://127.0.0.1:4000", key: "${key:gateway}"}

Chat goes through `OpenAIChatProvider` to `{root}/v1/chat/completions` with the proxy key
(master or virtual) as the Bearer token. What is known of each model comes from
`{root}/model/info` (one entry per model name: `max_input_tokens`, `max_output_tokens`,
`supports_function_calling`, `supports_reasoning`, `supports_vision`, prices per token,
and `litellm_params.model`, the model behind the name), falling back to `{root}/v1/models`
when the proxy does not answer it. Nulls stay None: shown as unknown.

When the model behind a name is an Ollama one (`ollama/...`, `ollama_chat/...`), Ollama
cuts the prompt at its own small default window unless told otherwise, so each request
carries `num_ctx` (sized from the request as the Ollama adapter sizes it, never shrinking
for a model, capped by the model's window when known) and `repeat_penalty`; a small model
(profiles: small) also gets its output limit as `max_tokens`. Provider options:

    repeat_penalty   the value sent to an Ollama model (default 1.1; null: not sent)
    min_num_ctx, max_num_ctx, num_ctx_margin, answer_tokens    as for kind ollama
    num_ctx          a fixed window instead of the estimate

and per model (`models: {NAME: {underlying: "ollama_chat/qwen2.5-coder:1.5b"}}`) the model
behind a name, when /model/info cannot be asked.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self, Unpack

import httpx

from totem.providers.base import (
    AuthError,
    ModelRequest,
    ProviderError,
    RetryableError,
    StreamEvent,
)
from totem.providers.catalog.catalogue import ModelInfo, Price, model_info, normalize_id
from totem.providers.catalog.profiles import profile_for
from totem.providers.openai_chat import OpenAIChatProvider, to_wire
from totem.providers.transport.http import HttpOptions
from totem.providers.wire.ollama import ANSWER_TOKENS, MARGIN, MIN_NUM_CTX, estimate_num_ctx

if TYPE_CHECKING:
    from totem.settings.config import ProviderConfig

__all__ = ["DEFAULT_BASE_URL", "LiteLLMModel", "LiteLLMProvider", "from_config", "is_ollama",
           "parse_model_info"]

DEFAULT_BASE_URL = "http://127.0.0.1:4000"
REPEAT_PENALTY = 1.1
_OLLAMA_PREFIXES = ("ollama/", "ollama_chat/")


@dataclass(frozen=True, slots=True)
class LiteLLMModel:
    """One model name of the proxy and what /model/info says of it (None: unknown)."""

    name: str
    underlying: str = ""  # litellm_params.model, e.g. "ollama_chat/qwen2.5-coder:1.5b"
    backend: str = ""  # model_info.litellm_provider, e.g. "ollama_chat"
    reported: dict[str, Any] = field(default_factory=dict)  # for catalogue.model_info

    @property
    def ollama(self) -> bool:
        return is_ollama(self.underlying, self.backend)


def is_ollama(underlying: str, backend: str = "") -> bool:
    """Whether the model behind a gateway name is served by Ollama."""
    return underlying.startswith(_OLLAMA_PREFIXES) or backend in ("ollama", "ollama_chat")


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return int(value)


def _per_million(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return round(float(value) * 1_000_000, 6)


def _price(info: Mapping[str, Any]) -> Price | None:
    inp = _per_million(info.get("input_cost_per_token"))
    out = _per_million(info.get("output_cost_per_token"))
    if inp is None or out is None:
        return None
    return Price(inp, out, _per_million(info.get("cache_read_input_token_cost")),
                 _per_million(info.get("cache_creation_input_token_cost")))


def _context(info: Mapping[str, Any]) -> int | None:
    # `max_tokens` is LiteLLM's legacy field: the output limit when one is known, the input
    # window otherwise.
    window = _positive_int(info.get("max_input_tokens"))
    if window is None and _positive_int(info.get("max_output_tokens")) is None:
        window = _positive_int(info.get("max_tokens"))
    return window


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def parse_model_info(data: Any) -> list[LiteLLMModel]:
    """The models of a /model/info answer, one per name (the first deployment of a name)."""
    items = data.get("data") if isinstance(data, Mapping) else None
    models: dict[str, LiteLLMModel] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping) or not item.get("model_name"):
            continue
        name = str(item["model_name"])
        params, info = _mapping(item.get("litellm_params")), _mapping(item.get("model_info"))
        underlying = str(params.get("model") or "")
        reported: dict[str, Any] = {
            "underlying": underlying,
            "context_window": _context(info),
            "max_output": _positive_int(info.get("max_output_tokens")),
            "tools": _bool(info.get("supports_function_calling")),
            "reasoning": _bool(info.get("supports_reasoning")),
            "vision": _bool(info.get("supports_vision")),
            "price": _price(info),
        }
        backend = str(info.get("litellm_provider") or params.get("custom_llm_provider") or "")
        models.setdefault(name, LiteLLMModel(name, underlying, backend, reported))
    return list(models.values())


class LiteLLMProvider(OpenAIChatProvider):
    """A LiteLLM proxy: OpenAI chat, plus /model/info and the Ollama window."""

    def __init__(
        self,
        name: str,
        base_url: str = DEFAULT_BASE_URL,
        *,
        config: ProviderConfig | None = None,
        **kwargs: Unpack[HttpOptions],
    ) -> None:
        self.root = (base_url or DEFAULT_BASE_URL).rstrip("/").removesuffix("/v1")
        super().__init__(name, f"{self.root}/v1", **kwargs)
        self.config = config
        self._models: dict[str, LiteLLMModel] | None = None
        self._models_lock = asyncio.Lock()
        self._num_ctx: dict[str, int] = {}  # the last window sent, per model: it only grows

    @classmethod
    def from_config(cls, cfg: ProviderConfig, key: str | None = None) -> Self:
        """As for every provider, and `cfg` kept: its `models` may name what is behind."""
        provider = super().from_config(cfg, key)
        provider.config = cfg
        return provider

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"LiteLLMProvider(name={self.name!r}, base_url={self.root!r}, key={key})"

    def _http_error(self, response: httpx.Response, body: bytes) -> ProviderError:
        # Without a database the proxy answers a missing key with a bare 500 (which would be
        # retried ten times) and a wrong key with 400 "No connected db.": both say "key".
        status = response.status_code
        if status == 500 and not self._api_key and body.strip() == b"Internal Server Error":
            return AuthError(f"HTTP 500 from the LiteLLM proxy {self.root}: it wants a key "
                             f"(provider {self.name} has no key set)", status=status)
        if status == 400 and b"No connected db" in body:
            return AuthError(f"HTTP 400 from the LiteLLM proxy {self.root}: the key of provider "
                             f"{self.name} was refused (a proxy without a database answers a "
                             "wrong key so)", status=status)
        return super()._http_error(response, body)

    # models -----------------------------------------------------------------------------------

    async def model_entries(self) -> list[LiteLLMModel]:
        """Every model name of the proxy: /model/info, or /v1/models when that fails."""
        response = await self._get(f"{self.root}/model/info", check=False)
        if response.status_code < 400:
            try:
                entries = parse_model_info(response.json())
            except ValueError:
                entries = []
            if entries:
                return entries
        if response.status_code >= 400:
            error = self._http_error(response, response.content)
            if isinstance(error, AuthError):
                raise error
        return [LiteLLMModel(name) for name in await super().list_models()]

    async def list_models(self) -> list[str]:
        return [entry.name for entry in await self.model_entries()]

    async def model_infos(self) -> list[ModelInfo]:
        """What is known of each model: the proxy's answer over the built-in table."""
        return [model_info(self.config, e.name, reported=e.reported)
                for e in await self.model_entries()]

    async def entry(self, model: str) -> LiteLLMModel | None:
        """What the proxy (or the configuration) says of `model`; asked once and kept. A
        proxy that cannot answer counts as saying nothing; a network failure is not kept."""
        configured = self._configured(model)
        if configured is not None:
            return configured
        async with self._models_lock:
            if self._models is None:
                try:
                    entries = await self.model_entries()
                except RetryableError as exc:
                    if exc.status is None:  # network: the request itself will say so
                        return None
                    entries = []
                except ProviderError:  # a key /model/info refuses, an odd proxy: no info
                    entries = []
                self._models = {e.name: e for e in entries}
        return self._models.get(model)

    def _configured(self, model: str) -> LiteLLMModel | None:
        spec = self.config.models.get(model) if self.config is not None else None
        if isinstance(spec, Mapping) and spec.get("underlying"):
            return LiteLLMModel(model, str(spec["underlying"]), reported=dict(spec))
        return None

    # requests ---------------------------------------------------------------------------------

    async def prepare(self, request: ModelRequest) -> ModelRequest:
        """`request` with what an Ollama model behind the proxy needs (nothing otherwise)."""
        entry = await self.entry(request.model)
        if entry is None or not entry.ollama:
            return request
        opts = {**self.options, **request.options}
        info = model_info(self.config, request.model, reported=entry.reported)
        behind = entry.underlying.split("/", 1)[-1]
        profile = profile_for(normalize_id(behind) if behind else request.model)
        max_tokens = request.max_tokens
        if max_tokens is None and profile.small:
            max_tokens = info.max_output or profile.max_output
        extra = dict(opts.get("extra_body") or {})
        sized = dataclasses.replace(request, max_tokens=max_tokens)
        if "num_ctx" not in extra:
            extra["num_ctx"] = self._window(sized, opts, info.context_window)
        penalty = opts.get("repeat_penalty", REPEAT_PENALTY)
        if penalty is not None and "repeat_penalty" not in extra:
            extra["repeat_penalty"] = penalty
        return dataclasses.replace(sized, options={**request.options, "extra_body": extra})

    def _window(self, request: ModelRequest, opts: Mapping[str, Any], limit: int | None) -> int:
        fixed = _positive_int(opts.get("num_ctx"))
        if fixed is not None:
            return fixed
        body = to_wire(request, options=self.options)
        caps = [c for c in (limit, _positive_int(opts.get("max_num_ctx"))) if c]
        size = estimate_num_ctx(
            body,
            answer=request.max_tokens or _positive_int(opts.get("answer_tokens")) or ANSWER_TOKENS,
            margin=float(opts.get("num_ctx_margin") or MARGIN),
            minimum=_positive_int(opts.get("min_num_ctx")) or MIN_NUM_CTX,
            cap=min(caps) if caps else None,
            floor=self._num_ctx.get(request.model),
        )
        self._num_ctx[request.model] = size
        return size

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        prepared = await self.prepare(request)
        async for event in super().stream(prepared):
            yield event


def from_config(cfg: ProviderConfig, key: str | None = None) -> LiteLLMProvider:
    """A provider from configuration (base URL default http://127.0.0.1:4000)."""
    return LiteLLMProvider.from_config(cfg, key)
