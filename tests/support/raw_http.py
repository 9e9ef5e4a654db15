"""Raw bytes on a socket to a local server, as an attacker would send them, and what comes
back; the resident memory of a process (now, and its peak).

    status, head, body = exchange(port, b"GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
    closed_by_server(sock, within=15)     # True once the server has closed the connection
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

__all__ = ["closed_by_server", "connect", "exchange", "read_reply", "rss_kib"]


def connect(port: int, *, timeout: float = 30) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def read_reply(sock: socket.socket) -> tuple[int, bytes, bytes]:
    """Read until the server closes: (status, head, body); status 0 when nothing came."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    return status, head, body


def exchange(port: int, request: bytes, *, timeout: float = 30) -> tuple[int, bytes, bytes]:
    """Send `request` on a new connection and read the reply until the server closes."""
    with connect(port, timeout=timeout) as sock:
        sock.sendall(request)
        return read_reply(sock)


def closed_by_server(sock: socket.socket, *, within: float) -> bool:
    """True when the server closes the connection (end of file) within `within` seconds."""
    sock.settimeout(within)
    deadline = time.monotonic() + within
    try:
        while time.monotonic() < deadline:
            if not sock.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return False


def rss_kib(pid: int, *, peak: bool = False) -> int:
    """The resident memory of process `pid` in KiB (Linux /proc): now, or its peak so far."""
    field = "VmHWM:" if peak else "VmRSS:"
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for process {pid}")
