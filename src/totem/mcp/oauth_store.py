"""An HTTP MCP server's OAuth tokens and client registration, kept in the 0600 key store.

    key  mcp-oauth.<server>.<hash of its URL>   one line of JSON:
         {"tokens": {...}, "expires_at": 1790000000.0, "client": {...}}

The tokens are never written to the configuration, the session or a log; the key store is
the one place they live (`settings/keys.py`). The expiry is kept as a point in time, so a
later run can tell an expired token and refresh it before the first request.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from typing import Any

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import ValidationError

from totem.settings.keys import delete_key, get_key, set_key

__all__ = ["KeyStoreTokens", "token_key"]

_NAME_OK = re.compile(r"[^A-Za-z0-9_.\-]")


def token_key(server: str, url: str) -> str:
    """The key store's name for a server's OAuth state (its URL changing means new tokens)."""
    digest = hashlib.sha256(url.encode()).hexdigest()[:10]
    return f"mcp-oauth.{_NAME_OK.sub('_', server)[:40]}.{digest}"


class KeyStoreTokens:
    """The SDK's `TokenStorage`, backed by one entry of the key store. A client registered
    beforehand (`configured`, from the config) is used as it is and never stored."""

    def __init__(self, server: str, url: str) -> None:
        self.key = token_key(server, url)
        self.configured: OAuthClientInformationFull | None = None

    def _load(self) -> dict[str, Any]:
        text = get_key(self.key)
        if not text:
            return {}
        try:
            data = json.loads(text)
        except ValueError:
            return {}  # a damaged entry means signing in again, never a crash
        return data if isinstance(data, dict) else {}

    def _save(self, data: dict[str, Any]) -> None:
        set_key(self.key, json.dumps(data, separators=(",", ":"), sort_keys=True))

    async def get_tokens(self) -> OAuthToken | None:
        tokens = self._load().get("tokens")
        try:
            return OAuthToken.model_validate(tokens) if tokens else None
        except ValidationError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        data = self._load()
        data["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        data["expires_at"] = time.time() + tokens.expires_in if tokens.expires_in else None
        self._save(data)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.configured is not None:
            return self.configured
        client = self._load().get("client")
        try:
            return OAuthClientInformationFull.model_validate(client) if client else None
        except ValidationError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        data = self._load()
        data["client"] = client_info.model_dump(mode="json", exclude_none=True)
        self._save(data)

    def expires_at(self) -> float | None:
        """When the stored access token expires (time.time()); None: not known."""
        value = self._load().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def redirect_uri(self) -> str | None:
        """The loopback address the stored registration was made with, if any."""
        uris = (self._load().get("client") or {}).get("redirect_uris") or []
        return str(uris[0]) if uris else None

    def signed_in(self) -> bool:
        return bool(self._load().get("tokens"))

    def forget(self) -> bool:
        """Delete the stored tokens and registration; False when there were none."""
        return delete_key(self.key)
