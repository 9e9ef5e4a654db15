"""Reading a server's "the request is larger than my window" answer.

llama-server answers a prompt past its window with HTTP 400 "the request exceeds the
available context size" (newer versions add both sizes in tokens), OpenAI with the code
`context_length_exceeded`, vLLM with "maximum context length is N tokens", LM Studio and
Ollama in words of their own. The loop compacts and asks again instead of ending the run.
"""

from __future__ import annotations

import re

from totem.providers.base import InvalidRequest, ProviderError

__all__ = ["context_overflow", "window_in_error"]

_OVERFLOW = re.compile(
    r"exceeds? (the )?(available )?context|context[_ ]length[_ ]exceeded|maximum context length"
    r"|context (size|window|length) (has been )?exceeded|too many tokens|prompt is too long"
    r"|input is too long|n_ctx",
    re.I,
)
_WINDOW = re.compile(
    r"context (?:size|length|window)[^0-9]{0,30}(\d{3,7})|n_ctx\D{0,5}(\d{3,7})"
    r"|maximum context length is (\d{3,7})",
    re.I,
)


def context_overflow(exc: ProviderError) -> bool:
    """Whether `exc` says the request did not fit the model's window."""
    return isinstance(exc, InvalidRequest) and bool(_OVERFLOW.search(exc.message))


def window_in_error(message: str) -> int | None:
    """The window in tokens that an overflow message names, if it names one."""
    found = _WINDOW.search(message)
    if found is None:
        return None
    return int(next(g for g in found.groups() if g))
