"""Keeps secrets out of tool results: a command such as `env` or `cat .env` would
otherwise carry API keys into the conversation, the store and the model's context.

The values of environment variables whose names say they are secret (…KEY, …TOKEN, …SECRET,
…PASSWORD, …CREDENTIALS), and every configured provider key, are replaced by `[redacted]`.
Commands still receive the variables: only what comes back is filtered.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

__all__ = ["Redactor"]

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.I)
MIN_LENGTH = 8
MASK = "[redacted]"


class Redactor:
    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values: set[str] = {v for v in values if len(v) >= MIN_LENGTH}
        self._pattern: re.Pattern[str] | None = None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Redactor:
        env = os.environ if environ is None else environ
        return cls(v for k, v in env.items() if _SECRET_NAME.search(k))

    def add(self, value: str | None) -> None:
        if value and len(value) >= MIN_LENGTH and value not in self._values:
            self._values.add(value)
            self._pattern = None

    def __call__(self, text: str) -> str:
        if not self._values or not text:
            return text
        if self._pattern is None:
            ordered = sorted(self._values, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(v) for v in ordered))
        return self._pattern.sub(MASK, text)
