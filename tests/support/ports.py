"""A port on 127.0.0.1 where nothing listens: bound to get it, then closed."""

from __future__ import annotations

import socket


def closed_port() -> int:
    """A port of 127.0.0.1 that refuses connections (free when this returns)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
