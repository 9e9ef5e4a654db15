"""Who may talk to `totem serve`.

- Every request carries the token: in the cookie the first visit sets (from `/?token=...`,
  the URL the server prints, as Jupyter does), or as `Authorization: Bearer TOKEN`.
- On a loopback address the `Host` header must name the server (no DNS rebinding).
- A request whose `Origin` is another site's is refused, whatever its route or method; so is
  one that `Sec-Fetch-Site` says is cross-site, unless it is a plain navigation to the page.
  A client without a browser sends no Origin; it still needs the token.

These checks read only the request's head: they run before any of its body is read.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from http.cookies import SimpleCookie

__all__ = ["Guard", "Head", "SECURITY_HEADERS", "is_loopback", "new_token"]

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
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


@dataclass(frozen=True, slots=True)
class Head:
    """What the checks read of a request: its method, path, headers (lower-case names),
    query, and the port it came in on."""

    method: str
    path: str
    headers: Mapping[str, str]
    query: Mapping[str, str]
    port: int

    def cookie(self, name: str) -> str | None:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(self.headers.get("cookie", ""))
        except Exception:  # a malformed cookie header is no token
            return None
        morsel = jar.get(name)
        return morsel.value if morsel is not None else None


@dataclass(slots=True)
class Guard:
    token: str
    host: str
    port: int = 0  # 0: the port each request came in on

    def cookie_name(self, port: int) -> str:
        return f"totem_token_{port}"  # cookies ignore ports: one name per server

    def cookie(self, port: int) -> str:
        return (f"{self.cookie_name(port)}={self.token}; Path=/; HttpOnly; SameSite=Strict; "
                "Max-Age=2592000")

    def matches(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(str(given).encode(), self.token.encode())

    def token_in_query(self, head: Head) -> bool:
        return self.matches(head.query.get("token"))

    def authorized(self, head: Head) -> bool:
        if self.matches(head.cookie(self.cookie_name(head.port))):
            return True
        auth = head.headers.get("authorization", "")
        if auth.lower().startswith("bearer ") and self.matches(auth[7:].strip()):
            return True
        return self.token_in_query(head)

    def allowed_hosts(self, port: int) -> set[str]:
        names = {"127.0.0.1", "localhost", "[::1]"}
        if not is_loopback(self.host):
            names.add(f"[{self.host}]" if ":" in self.host else self.host)
        return {f"{name}:{port}" for name in names}

    def host_ok(self, head: Head) -> bool:
        """The Host header names this server (checked on loopback binds; a server bound to
        another address is reached by names it cannot know, and relies on the token)."""
        if not is_loopback(self.host):
            return True
        return head.headers.get("host", "").lower() in self.allowed_hosts(head.port)

    def origin_ok(self, head: Head) -> bool:
        """False for a request sent by a page of another site, on any route."""
        site = head.headers.get("sec-fetch-site", "")
        navigation = head.method in _SAFE_METHODS and head.headers.get("sec-fetch-mode") == \
            "navigate" and head.path == "/"
        if site == "cross-site" and not navigation:
            return False
        origin = head.headers.get("origin")
        if origin is None:
            return True
        return origin.lower() == f"http://{head.headers.get('host', '').lower()}"

    def refusal(self, head: Head) -> str | None:
        """Why the request is refused, or None when it may go on."""
        if not self.host_ok(head):
            return "unknown host"
        if not self.origin_ok(head):
            return "foreign origin"
        if not self.authorized(head):
            return "missing or wrong token"
        return None
