"""Enterprise-managed sign-in ("cross-app access"): the person's ID token from the company's
identity provider becomes an MCP access token, with no browser and no consent screen.

    1. At the identity provider (RFC 8693 token exchange): the ID token for an ID-JAG, a
       short-lived signed grant naming the MCP authorization server (`audience`) and the MCP
       server (`resource`). The provider decides whether this person may use that server.
    2. At the MCP authorization server (RFC 7523 jwt-bearer grant): the ID-JAG, with the
       client's id and secret (HTTP Basic), for an access token.

Step 2 is the SDK's `IdentityAssertionOAuthProvider`; step 1 is here. The authorization
server is `oauth.issuer` when configured, so that no server can send the client's secret
elsewhere; otherwise the first one the server's protected-resource metadata (RFC 9728)
names, once that metadata is checked to describe this server. The access token lives in the
key store like any other (oauth_store.py); the ID token and both secrets come from the
configuration's `${key:...}` or `${env:...}` references (the ID token may instead come from
`id_token_command`, run at each exchange), are never stored by totem, and never shown.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp.client.auth import OAuthFlowError
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    extract_resource_metadata_from_www_auth,
    handle_protected_resource_response,
)
from mcp.shared.auth import ProtectedResourceMetadata
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url

from totem.mcp.config import HttpServer, IdentityProvider, resolve_secrets
from totem.mcp.oauth_store import KeyStoreTokens

__all__ = ["CrossAppAccessAuth", "id_token_of", "request_id_jag"]

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
IDP_TIMEOUT = 30.0
ID_TOKEN_COMMAND_TIMEOUT = 60.0  # seconds; the command may itself ask the identity provider
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _check_endpoint(url: str) -> None:
    """The ID token travels only over https, or to this machine."""
    parts = urlsplit(url)
    if parts.scheme != "https" and parts.hostname not in LOOPBACK:
        raise OAuthFlowError(f"the identity provider's token endpoint {url} is not https; "
                          "the ID token is not sent there")


async def request_id_jag(
    idp: IdentityProvider, *, audience: str, resource: str, scope: str | None = None
) -> str:
    """Step 1: the ID-JAG for `audience` (the authorization server's issuer) and `resource`
    (the MCP server), from the identity provider's token endpoint (client_secret_post)."""
    _check_endpoint(idp.token_endpoint)
    secrets = resolve_secrets(
        {k: v for k, v in (("id_token", idp.id_token), ("secret", idp.client_secret)) if v},
        what="the identity provider",
    )
    if idp.id_token_command:
        secrets["id_token"] = await id_token_of(idp.id_token_command)
    form = {
        "grant_type": TOKEN_EXCHANGE, "requested_token_type": ID_JAG,
        "subject_token": secrets["id_token"], "subject_token_type": ID_TOKEN,
        "audience": audience, "resource": resource, "client_id": idp.client_id,
        **({"client_secret": secrets["secret"]} if "secret" in secrets else {}),
        **({"scope": scope} if scope else {}),
    }
    async with httpx2.AsyncClient(timeout=IDP_TIMEOUT, follow_redirects=False) as http:
        try:
            response = await http.post(idp.token_endpoint, data=form,
                                       headers={"Accept": "application/json"})
        except httpx2.TransportError as exc:
            raise OAuthFlowError(f"the identity provider could not be reached: "
                              f"{exc or type(exc).__name__}") from None
    return _id_jag_of(response, hide=list(secrets.values()))


async def id_token_of(command: tuple[str, ...]) -> str:
    """What `id_token_command` prints (no shell); an error with its exit status and the last
    line it wrote to stderr when it fails."""
    try:
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE)
    except OSError as exc:
        raise OAuthFlowError(f"the id_token_command {command[0]} cannot be run: "
                             f"{exc.strerror or exc}") from None
    try:
        out, err = await asyncio.wait_for(process.communicate(), ID_TOKEN_COMMAND_TIMEOUT)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise OAuthFlowError(f"the id_token_command {command[0]} did not finish within "
                             f"{ID_TOKEN_COMMAND_TIMEOUT:g} s") from None
    token = out.decode(errors="replace").strip()
    if process.returncode != 0 or not token:
        said = (err.decode(errors="replace").strip().splitlines() or [""])[-1][:200]
        raise OAuthFlowError(f"the id_token_command {command[0]} exited with "
                             f"{process.returncode} and no ID token"
                             + (f": {said}" if said else ""))
    return token


def _id_jag_of(response: httpx2.Response, *, hide: list[str]) -> str:
    """The ID-JAG of the identity provider's answer, or a OAuthFlowError saying why not (its
    `error` and `error_description`, with nothing of the ID token or the secret in it)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        body = {}
    if response.status_code != 200:
        reason = " - ".join(str(body[k]) for k in ("error", "error_description") if body.get(k))
        for secret in hide:
            reason = reason.replace(secret, "****")
        raise OAuthFlowError(f"the identity provider refused the token exchange (HTTP "
                          f"{response.status_code}{': ' + reason if reason else ''}); "
                          "if the ID token has expired, store a fresh one")
    grant = body.get("access_token")
    if body.get("issued_token_type") != ID_JAG or not isinstance(grant, str) or not grant:
        raise OAuthFlowError("the identity provider answered the token exchange without an "
                          "ID-JAG (issued_token_type " + str(body.get("issued_token_type")) + ")")
    return grant


class CrossAppAccessAuth(httpx2.Auth):
    """The httpx auth of a `grant: cross_app_access` server: the SDK's jwt-bearer provider,
    made once the authorization server is known (configured, or found on the first 401)."""

    requires_response_body = True

    def __init__(self, server: HttpServer, tokens: KeyStoreTokens) -> None:
        settings = server.oauth
        assert settings.client_id and settings.client_secret and settings.idp
        self._server = server
        self._tokens = tokens
        self._idp = settings.idp
        self._secret = resolve_secrets({"s": settings.client_secret}, what=server.name)["s"]
        self._resource = resource_url_from_server_url(server.url)
        self._lock = anyio.Lock()
        self._provider = self._provider_for(settings.issuer) if settings.issuer else None

    def _provider_for(self, issuer: str) -> IdentityAssertionOAuthProvider:
        settings = self._server.oauth
        assert settings.client_id is not None
        return IdentityAssertionOAuthProvider(
            self._server.url, self._tokens, settings.client_id, self._secret, issuer,
            assertion_provider=self._assertion, scope=settings.scope,
            token_endpoint_auth_method="client_secret_basic",
        )

    async def _assertion(self, audience: str, resource: str) -> str:
        return await request_id_jag(self._idp, audience=audience, resource=resource,
                                    scope=self._server.oauth.scope)

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self._provider is None:
            async with self._lock:
                if self._provider is None:
                    response = yield request
                    if response.status_code != 401:
                        return
                    metadata = None
                    named = extract_resource_metadata_from_www_auth(response)
                    for url in build_protected_resource_metadata_discovery_urls(
                            named, self._server.url):
                        found = yield create_oauth_metadata_request(url)
                        metadata = await handle_protected_resource_response(found)
                        if metadata is not None:
                            break
                    self._provider = self._provider_for(self._issuer_of(metadata))
        flow = self._provider.async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _issuer_of(self, metadata: ProtectedResourceMetadata | None) -> str:
        """The authorization server the server's own metadata names for it."""
        if metadata is None:
            raise OAuthFlowError("the server publishes no protected-resource metadata naming "
                              "its authorization server; set oauth.issuer")
        if not check_resource_allowed(self._resource, str(metadata.resource)):
            raise OAuthFlowError(f"the server's protected-resource metadata is for "
                              f"{metadata.resource}, not {self._resource}")
        return str(metadata.authorization_servers[0])
