"""A key written in the configuration: `${env:VAR}`, `${key:NAME}` (the key store) or text.

A `Secret` never shows itself: repr and str are masked; `reveal` gives the value when used.
"""

from __future__ import annotations

import os
import re

__all__ = ["Secret"]

_ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


class Secret:
    """A key that never shows itself: repr and str are masked."""

    __slots__ = ("_raw",)

    def __init__(self, raw: str) -> None:
        self._raw = raw

    def reveal(self) -> str | None:
        """The key, with `${env:VAR}` resolved; None when the variable is not set."""
        missing: list[str] = []

        def sub(match: re.Match[str]) -> str:
            value = os.environ.get(match.group(1))
            if value is None:
                missing.append(match.group(1))
                return ""
            return value

        value = _ENV_REF.sub(sub, self._raw)
        if "${key:" in value:  # a key typed into `totem providers add`, kept in keys.json
            from totem.settings.keys import resolve_refs

            value, absent = resolve_refs(value)
            missing += absent
        return None if missing else value

    def env_vars(self) -> list[str]:
        return _ENV_REF.findall(self._raw)

    def source(self) -> str:
        """Where the key comes from and whether it is there, for a person: never the key."""
        from totem.settings.keys import KEY_REF, load_keys

        refs = KEY_REF.findall(self._raw)
        if refs:
            stored = load_keys()
            absent = [r for r in refs if r not in stored]
            return f"missing from the key store: {', '.join(absent)}" if absent else "stored"
        env = self.env_vars()
        if env:
            absent = [v for v in env if v not in os.environ]
            names = ", ".join(f"${v}" for v in env)
            return f"{names} (not set)" if absent else names
        return "set in the configuration"

    def __repr__(self) -> str:
        return "Secret(****)"

    __str__ = __repr__
