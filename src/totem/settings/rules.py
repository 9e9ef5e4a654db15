"""A permission rule as the config states it: `(permission, pattern, action)`.

The data only; policy/permission.py evaluates rules (last match wins). It lives here so that
settings/config.py reads rules without importing the layer above it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = ["Action", "Rule"]

Action: TypeAlias = Literal["allow", "ask", "deny"]


@dataclass(frozen=True, slots=True)
class Rule:
    permission: str
    pattern: str
    action: Action
