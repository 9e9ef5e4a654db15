"""An MCP server (Python SDK) behind OAuth 2.1, with its own authorization server, on 127.0.0.1.

    python tests/mcp/oauthserver.py PORT [TOKEN_SECONDS]

Both roles live in one process, as the SDK's `MCPServer(auth_server_provider=...)` serves
them: protected-resource metadata, authorization-server metadata, dynamic registration,
/authorize, /token (with refresh). /authorize sends the browser to a sign-in page with an
"Allow" button; pressing it comes back to the client's redirect URI with the code. What
happened (registrations, grants, refreshes, pages shown) is at GET /_events, for the tests.
"""

from __future__ import annotations

import secrets
import sys
import time
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

PORT = int(sys.argv[1])
TOKEN_SECONDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3600
BASE = f"http://127.0.0.1:{PORT}"
SCOPE = "notes"
EVENTS: list[dict[str, Any]] = []
PAGE = """<!doctype html><meta charset=utf-8><title>Sign in to notes</title>
<h1>Sign in to notes</h1><p>totem asks to read your notes.</p>
<form method=post action="/login/allow"><input type=hidden name=request value="{request}">
<button id=allow type=submit>Allow</button></form>"""


class Provider:
    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.pending: dict[str, tuple[str, AuthorizationParams]] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        EVENTS.append({"event": "register", "client_name": client_info.client_name,
                       "redirect_uris": [str(u) for u in client_info.redirect_uris or []]})

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        request = secrets.token_urlsafe(16)
        assert client.client_id is not None
        self.pending[request] = (client.client_id, params)
        EVENTS.append({"event": "authorize", "pkce": bool(params.code_challenge)})
        return f"{BASE}/login?request={request}"

    def allow(self, request: str) -> str:
        client_id, params = self.pending.pop(request)
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [SCOPE], expires_at=time.time() + 300,
            client_id=client_id, code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: Any, authorization_code: str) -> Any:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client: Any, authorization_code: Any) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        EVENTS.append({"event": "token", "grant": "authorization_code"})
        return self._issue(client.client_id, authorization_code.scopes)

    async def load_refresh_token(self, client: Any, refresh_token: str) -> Any:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: Any, refresh_token: Any, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        EVENTS.append({"event": "token", "grant": "refresh_token"})
        return self._issue(client.client_id, scopes or refresh_token.scopes)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str]) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + TOKEN_SECONDS)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(access_token=access, expires_in=TOKEN_SECONDS, refresh_token=refresh,
                          scope=" ".join(scopes))


provider = Provider()
app = MCPServer(
    "notes",
    auth_server_provider=provider,
    auth=AuthSettings(
        issuer_url=BASE,  # type: ignore[arg-type]
        resource_server_url=f"{BASE}/mcp",  # type: ignore[arg-type]
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=[SCOPE],
                                                              default_scopes=[SCOPE]),
        required_scopes=[SCOPE],
        validate_token_resource=False,
    ),
)


@app.tool()
def read_notes() -> str:
    """The signed-in person's notes."""
    return "note 1: buy milk"


@app.custom_route("/login", methods=["GET"])
async def login(request: Request) -> Response:
    EVENTS.append({"event": "page"})
    return HTMLResponse(PAGE.format(request=request.query_params.get("request", "")))


@app.custom_route("/login/allow", methods=["POST"])
async def allow(request: Request) -> Response:
    form = await request.form()
    return RedirectResponse(provider.allow(str(form["request"])), status_code=302)


@app.custom_route("/_events", methods=["GET"])
async def events(request: Request) -> Response:
    return JSONResponse(EVENTS)


if __name__ == "__main__":
    app.run("streamable-http", host="127.0.0.1", port=PORT)
