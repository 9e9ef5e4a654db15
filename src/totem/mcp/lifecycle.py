"""A server that stopped is started again on next use, waiting longer each time; one that
keeps failing is disabled for the session with a notice.

    reviver = Reviver(notice)
    note = await reviver.revive(connection)     # "" when it was running; raises McpServerError

The model is told once per restart, in the result of the call that caused it (`note`): what
the server kept in memory is gone. Failures count in a row: a call that succeeds after a
restart clears them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from totem.mcp.connection import Connection, McpServerError

__all__ = ["BACKOFF", "MAX_FAILURES", "Reviver"]

BACKOFF = (0.0, 1.0, 3.0)  # seconds before the 1st, 2nd, 3rd restart in a row
MAX_FAILURES = 3  # stops (crashes or failed restarts) in a row before it is disabled


class Reviver:
    def __init__(self, notice: Callable[[str, str], None], *, backoff: tuple[float, ...] = BACKOFF,
                 max_failures: int = MAX_FAILURES) -> None:
        self.notice = notice
        self.backoff = backoff
        self.max_failures = max_failures
        self.failures: dict[str, int] = {}  # stops in a row, by server
        self._locks: dict[str, asyncio.Lock] = {}

    def succeeded(self, connection: Connection) -> None:
        self.failures.pop(connection.name, None)

    async def revive(self, connection: Connection) -> str:
        """Restart `connection` when it stopped; the note for the model, or "" when it was
        running. Raises McpServerError when it cannot be restarted, or is disabled."""
        async with self._locks.setdefault(connection.name, asyncio.Lock()):
            if not connection.exited():
                if connection.state == "disabled":
                    raise McpServerError(_disabled(connection))
                return ""
            return await self._restart(connection)

    async def _restart(self, connection: Connection) -> str:
        name = connection.name
        why = connection.detail or "it stopped"
        while True:
            count = self.failures.get(name, 0) + 1
            self.failures[name] = count
            if count >= self.max_failures:
                await connection.stop()
                connection.state = "disabled"
                connection.detail = f"it stopped {count} times in a row"
                self.notice(f"The MCP server '{name}' kept failing ({connection.detail}); it "
                            "is disabled for the rest of this session.", "warning")
                raise McpServerError(_disabled(connection))
            await asyncio.sleep(self.backoff[min(count - 1, len(self.backoff) - 1)])
            try:
                await connection.restart()
            except McpServerError as exc:
                connection.state = "crashed"
                why = exc.message
                continue
            again = "started again" if connection.config.kind == "stdio" else "connected again"
            self.notice(f"The MCP server '{name}' had stopped ({why}); it was {again}.", "info")
            return (f"[The MCP server '{name}' had stopped ({why}) and was {again} for this "
                    "call; anything it kept from earlier calls may be gone.]")


def _disabled(connection: Connection) -> str:
    return (f"The MCP server '{connection.name}' is disabled for the rest of this session "
            f"({connection.detail}); its tools cannot be used.")
