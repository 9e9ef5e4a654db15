"""Who may talk to `totem serve`.

- Every request carries the token: in the cookie the first visit sets (from `/?token=...`,
  the URL the server prints, as Jupyter does), or as `Authorization: Bearer TOKEN`.
- On a loopback address the `Host` header must name the server (no DNS rebinding).
- A request that changes something, and the event stream, are refused when their `Origin`
  is another site's (or `Sec-Fetch-Site` says cross-site). A client without a browser sends
  no Origin; it still needs the token.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from dataclasses import dataclass

from totem.server.http import Request

__all__ = ["Guard", "SECURITY_HEADERS", "is_loopback", "new_token"]

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
_SAFE_METHODS = frozenset({"GET", "HEAD"})


def new_token() -> str:
    return secrets.token_urlsafe(24)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(slots=True)
class Guard:
    token: str
    host: str
    port: int

    @property
    def cookie_name(self) -> str:
        return f"totem_token_{self.port}"  # cookies ignore ports: one name per server

    def cookie(self) -> str:
        return (f"{self.cookie_name}={self.token}; Path=/; HttpOnly; SameSite=Strict; "
                "Max-Age=2592000")

    def _matches(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(str(given).encode(), self.token.encode())

    def token_in_query(self, request: Request) -> bool:
        return self._matches(request.query.get("token"))

    def authorized(self, request: Request) -> bool:
        if self._matches(request.cookie(self.cookie_name)):
            return True
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer ") and self._matches(auth[7:].strip()):
            return True
        return self.token_in_query(request)

    def allowed_hosts(self) -> set[str]:
        names = {"127.0.0.1", "localhost", "[::1]"}
        if not is_loopback(self.host):
            names.add(f"[{self.host}]" if ":" in self.host else self.host)
        return {f"{name}:{self.port}" for name in names}

    def host_ok(self, request: Request) -> bool:
        """The Host header names this server (checked on loopback binds; a server bound to
        another address is reached by names it cannot know, and relies on the token)."""
        if not is_loopback(self.host):
            return True
        return request.headers.get("host", "").lower() in self.allowed_hosts()

    def origin_ok(self, request: Request, *, stream: bool = False) -> bool:
        """False for a request that changes something (or the event stream) sent by a page
        of another site."""
        if request.method in _SAFE_METHODS and not stream:
            return True
        if request.headers.get("sec-fetch-site", "") == "cross-site":
            return False
        origin = request.headers.get("origin")
        if origin is None:
            return True
        return origin.lower() == f"http://{request.headers.get('host', '').lower()}"

    def refusal(self, request: Request, *, stream: bool = False) -> str | None:
        """Why the request is refused, or None when it may go on."""
        if not self.host_ok(request):
            return "unknown host"
        if not self.authorized(request):
            return "missing or wrong token"
        if not self.origin_ok(request, stream=stream):
            return "foreign origin"
        return None
