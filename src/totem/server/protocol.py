"""uvicorn's HTTP/1.1 protocol (h11) with a deadline on each request's headers.

uvicorn closes an idle keep-alive connection, but a client that sends part of a request line
or of its headers and then waits would hold its connection (and a file descriptor) for as
long as it likes. Here every request must have sent all its headers within
`header_timeout` seconds of its first byte (of the connection's opening, for the first).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HeaderDeadlineProtocol", "with_header_timeout"]


class HeaderDeadlineProtocol(H11Protocol):
    header_timeout = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            if self._header_timer is None:  # the first byte of the next request
                self._arm()
        else:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._disarm()  # uvicorn's keep-alive timer watches the idle time until the next byte

    def _arm(self) -> None:
        self._header_timer = self.loop.call_later(self.header_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _too_slow(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def with_header_timeout(seconds: float) -> type[HeaderDeadlineProtocol]:
    """The protocol class for uvicorn's `http=` with this deadline."""
    return type("HeaderDeadline", (HeaderDeadlineProtocol,), {"header_timeout": seconds})
