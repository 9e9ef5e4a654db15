"""Model quirks, in one place: a profile per model family.

Nothing else in totem checks a model's name. A profile says what the family needs: whether
it thinks inline (text before `</think>` is reasoning), whether it tends to write tool calls
as text, whether it calls tools reliably at all, and its window and output sizes when known.
Unknown stays unknown (None): it is shown as unknown, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["ModelProfile", "profile_for", "profile_for_served"]


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


def profile_for(model: str) -> ModelProfile:
    name = model.lower()
    for pattern, profile in _COMPILED:
        if pattern.search(name):
            return profile
    return _UNKNOWN


def profile_for_served(model: str, served_names: Sequence[str]) -> ModelProfile:
    """The profile of `model`, or, when its name matches no family (an alias such as
    `local`), of the first name the server gives for what it serves (the model file's
    name, the GGUF `general.name`, the architecture)."""
    profile = profile_for(model)
    if profile is not _UNKNOWN:
        return profile
    for name in served_names:
        found = profile_for(name)
        if found is not _UNKNOWN:
            return found
    return profile
