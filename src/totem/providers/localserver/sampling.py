"""How a request samples and how a model may call tools: bounded, calm, constrained.

`sampling_for(...)` decides, from the model's profile, what its server said of itself
(`serverinfo.ServerFacts`) and the configuration, in this order (later wins):

    defaults      nothing set for a hosted model; for a local one a bounded answer
                  (its output limit, at most 8,192 tokens) and the repeated-call guard
    small model   temperature 0.2, answers of at most 2,048 tokens, 8 calls per answer,
                  and constrained tool calls where the server can do it (`tool_mode: auto`)
    config        `temperature`, `max_tokens`, `max_calls`, `tool_mode` in the provider's
                  `options`, then in `models.MODEL` of the provider

`tool_mode` is `auto` (constrained for a small model on a server that can), `native` or
`constrained`. A server can constrain an answer to a JSON schema when it is llama.cpp,
vLLM, LM Studio (`response_format` with a `json_schema`) or Ollama (`format`).

A small model on llama.cpp is always constrained under `auto`: with native `tools`,
llama-server holds the answer to its tool grammar only from a trigger on (a "lazy"
grammar), and a piece of text that completes the trigger and runs past it (the real 0.5B
wrote `<function name="write",`) ends the server: "Unexpected empty grammar stack after
accepting piece". A JSON schema holds the answer from its first token, so no text can.

The server's own anti-repetition samplers (`LLAMACPP_ANSWER_SAMPLERS`: llama.cpp's DRY) go
with a constrained step that must be the answer (`stepmode.step_request`), not with a step
that may be a call: with the real 0.5B, DRY (multiplier 0.8) turned an edit's `old_string`
into a name alone and a new value into another, and `repeat_penalty` 1.05 or 1.1 turned the
value asked for (45, 73) into another (30, 74). An edit repeats text by its nature; a
repeating answer is cut as it streams (`stepmode.loop_cut`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from totem.providers.catalog.profiles import ModelProfile
from totem.providers.localserver.serverinfo import ServerFacts

__all__ = ["LLAMACPP_ANSWER_SAMPLERS", "Sampling", "sampling_for"]

SMALL_TEMPERATURE = 0.2
SMALL_MAX_TOKENS = 2_048
LOCAL_MAX_TOKENS = 8_192
SMALL_MAX_CALLS = 8
TOOL_MODES = ("auto", "native", "constrained")
# llama.cpp's DRY ("don't repeat yourself") sampler: a token that would continue a sequence
# already in the text (2 tokens or more, not across a newline, `:`, `"` or `*`) is made less
# likely, the more so the longer the sequence (0.8 x 1.75 ^ (length - 2)). The values are
# its author's recommended ones; llama-server's default multiplier is 0 (off).
# It looks back DRY_WINDOW tokens, not over the whole context (the server's default): over
# the whole context it kept the reply from quoting the tool results, which is what a reply
# should do. Asked to list the files and say what the project does, the 1.5B's reply (the
# same request asked again after the run's earlier ones, bench/smallmodel/replay.py) listed
# the files 2 of 6 times with the whole context, 5 of 6 with 64 tokens, 5 of 6 without DRY;
# 64 tokens still cover a reply that begins to repeat its own lines.
DRY_WINDOW = 64
LLAMACPP_ANSWER_SAMPLERS: dict[str, float | int] = {
    "dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": 2,
    "dry_penalty_last_n": DRY_WINDOW,
}


@dataclass(frozen=True, slots=True)
class Sampling:
    """What each request of a run carries, and how the answer's tool calls are held."""

    temperature: float | None = None
    max_tokens: int | None = None  # the most an answer may be; never more than the window left
    max_calls: int | None = None  # calls kept per answer; the rest are dropped with a notice
    guard_repeats: bool = False  # end a streamed answer that repeats a call a third time
    constrained: bool = False  # ask for one JSON step (a call or an answer), not native calls
    engine: str | None = None  # the server's engine, when it said


def _setting(settings: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    value = settings.get(key)
    if value is None:
        return default
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind is int and isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if kind is str and isinstance(value, str):
        return value
    raise ValueError(f"`{key}` must be a {'positive ' if kind is int else ''}{kind.__name__}, "
                     f"not {value!r}")


def sampling_for(
    profile: ModelProfile,
    facts: ServerFacts | None,
    *,
    local: bool,
    settings: Mapping[str, Any] | None = None,
) -> Sampling:
    """The sampling of one model (see the module doc). `settings` are the provider's
    options merged with the model's own entry; a wrong value raises `ValueError`."""
    settings = settings or {}
    small = profile.small and local
    temperature = SMALL_TEMPERATURE if small else None
    max_tokens: int | None = None
    if local:
        max_tokens = min(profile.max_output or LOCAL_MAX_TOKENS, LOCAL_MAX_TOKENS)
    if small:
        max_tokens = min(max_tokens or SMALL_MAX_TOKENS, SMALL_MAX_TOKENS)
    mode = _setting(settings, "tool_mode", str, "auto")
    if mode not in TOOL_MODES:
        raise ValueError(f"`tool_mode` must be one of {', '.join(TOOL_MODES)}, not {mode!r}")
    can_constrain = facts is not None
    return Sampling(
        temperature=_setting(settings, "temperature", float, temperature),
        max_tokens=_setting(settings, "max_tokens", int, max_tokens),
        max_calls=_setting(settings, "max_calls", int, SMALL_MAX_CALLS if small else None),
        guard_repeats=local,
        constrained=mode == "constrained" or (mode == "auto" and small and can_constrain),
        engine=facts.engine if facts is not None else None,
    )
