"""Session-scoped services for tools: one instance per kind, closed when the session ends.

A tool that keeps something alive across calls (background processes, the todo list) asks
`ctx.state.service(Kind)`; the first call creates `Kind()`. `aclose()` closes every service
that has an async `aclose` (the session service calls it when the session ends).
"""

from __future__ import annotations

import inspect
from typing import Any, TypeVar

__all__ = ["SessionState"]

T = TypeVar("T")


class SessionState:
    def __init__(self) -> None:
        self._services: dict[type[Any], Any] = {}

    def service(self, kind: type[T]) -> T:
        found = self._services.get(kind)
        if found is None:
            found = self._services[kind] = kind()
        assert isinstance(found, kind)
        return found

    def existing(self, kind: type[T]) -> T | None:
        found = self._services.get(kind)
        return found if isinstance(found, kind) else None

    async def aclose(self) -> None:
        services, self._services = list(self._services.values()), {}
        for service in services:
            close = getattr(service, "aclose", None)
            if close is not None:
                result = close()
                if inspect.isawaitable(result):
                    await result
