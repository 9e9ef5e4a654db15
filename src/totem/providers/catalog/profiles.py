"""Model quirks, in one place: a profile per model family.

Nothing else in totem checks a model's name. A profile says what the family needs: whether
it thinks inline (text before `</think>` is reasoning), whether it tends to write tool calls
as text, whether it calls tools reliably at all, and its window and output sizes when known.
Unknown stays unknown (None): it is shown as unknown, never guessed.

A model on a local server is known first by what the server says of it
(`profile_for_served`): its parameter count decides whether it is small (`SMALL_MAX_PARAMS`,
the one threshold), its chat template or architecture its family (`family_of`). The rules
over names (`profile_for`) decide only what the server does not say.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["SMALL_MAX_PARAMS", "ModelProfile", "family_of", "profile_for", "profile_for_served"]

# A model of at most this many parameters, served locally, is small: prompts, tools and
# limits are kept tight and each step is constrained. Every "3B" or "4B" model is under it
# (Llama-3.2-3B 3.2 B, Phi-3-mini 3.8 B, Qwen3-4B 4.0 B), every "7B" over it (Qwen2.5-7B 7.6 B).
SMALL_MAX_PARAMS = 4_500_000_000


@dataclass(frozen=True, slots=True)
class ModelProfile:
    family: str
    context_window: int | None = None
    max_output: int | None = None
    tools: bool | None = None  # False: known not to call tools reliably
    thinks_inline: bool = False  # reasoning written in the text, closed by </think>
    text_tool_calls: bool = True  # may write tool calls as text; parse them
    small: bool = False  # small local model: keep prompts and limits tight
    vision: bool | None = None  # takes images in the conversation (None: unknown)


def _hosted(family: str, window: int, output: int) -> ModelProfile:
    """A hosted frontier family: reliable native tool calls, takes images."""
    return ModelProfile(family, window, output, True, text_tool_calls=False, vision=True)


# (pattern on the lower-cased model id, profile). First match wins: specific before generic.
_FAMILIES: list[tuple[str, ModelProfile]] = [
    (r"qwen3.*coder", ModelProfile("qwen3-coder", 262_144, 65_536, True)),
    (r"qwen3", ModelProfile("qwen3", 40_960, 32_768, True, thinks_inline=True)),
    (r"qwq", ModelProfile("qwq", 131_072, 32_768, True, thinks_inline=True)),
    (r"deepseek-r1", ModelProfile("deepseek-r1", 131_072, 32_768, None, thinks_inline=True)),
    (
        r"qwen2\.5.*coder.*(0\.5b|1\.5b)",
        ModelProfile("qwen2.5-coder-small", 32_768, 8_192, None, small=True),
    ),
    (r"qwen2\.5.*(0\.5b|1\.5b)", ModelProfile("qwen2.5-small", 32_768, 8_192, False, small=True)),
    (r"qwen2\.5", ModelProfile("qwen2.5", 32_768, 8_192, True)),
    (r"llama-?3\.[123].*(1b|3b)", ModelProfile("llama3-small", 131_072, 8_192, None, small=True)),
    (r"llama-?3", ModelProfile("llama3", 131_072, 8_192, True)),
    (r"gpt-oss", ModelProfile("gpt-oss", 131_072, 32_768, True)),
    (r"gpt-4o|gpt-4\.1", _hosted("gpt-4", 128_000, 16_384)),
    (r"gpt-5", _hosted("gpt-5", 400_000, 128_000)),
    (r"claude", _hosted("claude", 200_000, 64_000)),
    (r"gemini", _hosted("gemini", 1_048_576, 65_536)),
    (r"mistral|devstral|codestral", ModelProfile("mistral", 131_072, 32_768, True)),
    (r"gemma", ModelProfile("gemma", 131_072, 8_192, None)),
    (r"phi", ModelProfile("phi", 16_384, 4_096, False, small=True)),
]

_COMPILED = [(re.compile(p), prof) for p, prof in _FAMILIES]
_UNKNOWN = ModelProfile("unknown")

# What a chat template says of its family: the special tokens and tags only that family's
# templates write (all of a row's markers present). First match wins.
_TEMPLATE_MARKERS: list[tuple[tuple[str, ...], str]] = [
    (("<|channel|>",), "gpt-oss"),
    (("<｜Assistant｜>", "<think>"), "deepseek-r1"),
    (("<|im_start|>", "<tool_call>", "<parameter="), "qwen3-coder"),
    (("<|im_start|>", "<think>"), "qwen3"),
    (("<|im_start|>", "<tool_call>"), "qwen2.5"),
    (("<|start_header_id|>",), "llama3"),
    (("<start_of_turn>",), "gemma"),
    (("[INST]",), "mistral"),
    (("<|im_sep|>",), "phi"),
    (("<|assistant|>", "<|end|>"), "phi"),
]
# What an architecture (GGUF `general.architecture`, Ollama's `family`, LM Studio's `arch`)
# says, by its first letters once lower-cased and stripped of `-` and `_`.
_ARCHITECTURES: list[tuple[str, str]] = [
    ("qwen3", "qwen3"), ("qwen2", "qwen2.5"), ("llama", "llama3"), ("gemma", "gemma"),
    ("phi", "phi"), ("mistral", "mistral"), ("mixtral", "mistral"), ("gptoss", "gpt-oss"),
]


def profile_for(model: str) -> ModelProfile:
    """The profile its name says (the name rules): for hosted models, and for a local one
    whose server says nothing."""
    name = model.lower()
    for pattern, profile in _COMPILED:
        if pattern.search(name):
            return profile
    return _UNKNOWN


def family_of(*, template: str | None = None, architecture: str | None = None) -> str | None:
    """The family (a name `profile_for` knows: `qwen2.5`, `llama3` ...) that a chat template,
    else an architecture, says; None when neither says one."""
    if template:
        for markers, family in _TEMPLATE_MARKERS:
            if all(marker in template for marker in markers):
                return family
    if architecture:
        arch = architecture.lower().replace("-", "").replace("_", "")
        for start, family in _ARCHITECTURES:
            if arch.startswith(start):
                return family
    return None


def profile_for_served(
    model: str,
    served_names: Sequence[str] = (),
    *,
    params: int | None = None,
    family: str | None = None,
) -> ModelProfile:
    """The profile of `model` as a local server serves it.

    The family: the one the served name says, else the one the server's chat template or
    architecture says (`family`, from `family_of`), else the first the server's other names
    say (the model file's name, the GGUF `general.name`). Small or not: by the parameter
    count when the server gave one (`params` at most `SMALL_MAX_PARAMS`), else as the
    family's name rule says."""
    profile = profile_for(model)
    if profile is _UNKNOWN and family:
        profile = profile_for(family)
    if profile is _UNKNOWN:
        profile = next((p for p in map(profile_for, served_names) if p is not _UNKNOWN),
                       _UNKNOWN)
    return profile if params is None else _sized(profile, small=params <= SMALL_MAX_PARAMS)


def _sized(profile: ModelProfile, *, small: bool) -> ModelProfile:
    """`profile` for a model the server says is small, or is not."""
    if small == profile.small:
        return profile
    if small:
        return dataclasses.replace(profile, family=f"{profile.family}-small", small=True,
                                   tools=None if profile.tools else profile.tools)
    return dataclasses.replace(profile, family=profile.family.removesuffix("-small"),
                               small=False)
