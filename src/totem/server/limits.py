"""How much `totem serve` lets one client hold: time to send headers and body, body size,
idle keep-alive, open connections.

    limits = Limits.from_environment()   # TOTEM_SERVE_HEADER_TIMEOUT=2 ... override a field

The environment names are `TOTEM_SERVE_` + the field in capitals (seconds, bytes, a count).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace

__all__ = ["Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    header_timeout: float = 10.0  # from the first byte of a request to the end of its headers
    body_timeout: float = 30.0  # from the end of the headers to the end of the body
    keep_alive: int = 15  # seconds an idle keep-alive connection stays open
    max_body: int = 1024 * 1024  # bytes; the page's largest body is an agent's prompt
    max_connections: int = 200  # open connections; beyond: 503 (each watched session holds one)
    max_header_bytes: int = 64 * 1024  # the request line and headers together

    @classmethod
    def from_environment(cls) -> Limits:
        """The defaults, with the fields set in the environment (a bad value: ValueError)."""
        changed: dict[str, float | int] = {}
        for item in fields(cls):
            raw = os.environ.get(f"TOTEM_SERVE_{item.name.upper()}")
            if raw is None:
                continue
            kind = float if item.type == "float" else int
            value = kind(raw)
            if value <= 0:
                raise ValueError(f"TOTEM_SERVE_{item.name.upper()} must be positive")
            changed[item.name] = value
        return replace(cls(), **changed)  # type: ignore[arg-type]
