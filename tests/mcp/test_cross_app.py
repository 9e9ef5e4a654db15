"""Cross-app access (`oauth: {grant: cross_app_access}`) where it can go wrong, against real
HTTP servers on 127.0.0.1: an identity provider that refuses the ID token, a server whose
metadata is for another resource, an identity provider reached without https. The whole
flow succeeding is the conformance suite's auth/cross-app-access-complete-flow
(test_conformance.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from mcp.client.auth import OAuthFlowError

from tests.support.local_http import Recorded, Reply, Server, scripted_server
from tests.support.mcp_servers import Person
from totem.mcp.config import HttpServer, IdentityProvider, OAuthSettings
from totem.mcp.cross_app import request_id_jag
from totem.mcp.manager import McpManager
from totem.settings.config import Secret

ID_TOKEN = "eyJhbGciOiJFUzI1NiJ9.the-persons-id-token.c2lnbmF0dXJl"
IDP_SECRET = "idp-client-secret-42"
CLIENT_SECRET = "mcp-client-secret-17"


@pytest.fixture
def secrets(tmp_path: Path) -> Iterator[Path]:
    """The ID token and the secrets in the environment, and a key store of this test alone."""
    saved = {k: os.environ.get(k) for k in ("XDG_CONFIG_HOME", "XAA_ID", "XAA_IDP", "XAA_MCP")}
    os.environ.update(XDG_CONFIG_HOME=str(tmp_path / "config"), XAA_ID=ID_TOKEN,
                      XAA_IDP=IDP_SECRET, XAA_MCP=CLIENT_SECRET)
    yield tmp_path / "config"
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def identity_provider(url: str) -> IdentityProvider:
    return IdentityProvider(token_endpoint=f"{url}/token", client_id="totem-at-idp",
                            id_token=Secret("${env:XAA_ID}"),
                            client_secret=Secret("${env:XAA_IDP}"))


def refusing_idp() -> Reply:
    """What an identity provider says of an expired ID token (echoing it, as some do)."""
    body = {"error": "invalid_grant", "error_description": f"ID token {ID_TOKEN} has expired"}
    return Reply(400, json.dumps(body).encode())


def protected_server(resource: str | None = None) -> dict[tuple[str, str], object]:
    """An MCP server that wants a token, with its authorization server on the same origin;
    its metadata describes `resource` (None: itself)."""

    def unauthorized(seen: Recorded) -> Reply:
        base = f"http://{seen.headers['host']}"
        return Reply(401, b'{"error": "invalid_token"}', {"WWW-Authenticate":
                     f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'})

    def prm(seen: Recorded) -> Reply:
        base = f"http://{seen.headers['host']}"
        return Reply(200, json.dumps({"resource": resource or f"{base}/mcp",
                                      "authorization_servers": [base]}).encode())

    def metadata(seen: Recorded) -> Reply:
        base = f"http://{seen.headers['host']}"
        return Reply(200, json.dumps({
            "issuer": base, "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token", "response_types_supported": ["code"],
            "grant_types_supported": ["urn:ietf:params:oauth:grant-type:jwt-bearer"]}).encode())

    return {("POST", "/mcp"): unauthorized, ("GET", "/mcp"): unauthorized,
            ("GET", "/.well-known/oauth-protected-resource/mcp"): prm,
            ("GET", "/.well-known/oauth-authorization-server"): metadata,
            ("POST", "/token"): lambda seen: Reply(500, b"{}")}


async def start(root: Path, server: HttpServer) -> str:
    person = Person(root)
    async with McpManager(root, {server.name: server}, permission=person.permission,
                          questions=person.questions, log_dir=root / "logs") as manager:
        status = manager.status()[0]
        return f"{status.state}: {status.detail}"


def form(seen: Recorded) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(seen.body.decode()).items()}


def cross_app_server(mcp: Server, idp: Server, *, issuer: str | None = None) -> HttpServer:
    oauth = OAuthSettings(grant="cross_app_access", client_id="totem-at-tracker",
                          client_secret=Secret("${env:XAA_MCP}"), issuer=issuer,
                          idp=identity_provider(idp.url))
    return HttpServer(name="tracker", url=f"{mcp.url}/mcp", startup_timeout=20.0, oauth=oauth)


def test_a_refused_id_token_is_explained_without_showing_it(tmp_path: Path, secrets: Path) -> None:
    with scripted_server(protected_server()) as mcp, \
            scripted_server({("POST", "/token"): lambda seen: refusing_idp()}) as idp:
        detail = asyncio.run(start(tmp_path, cross_app_server(mcp, idp)))
    assert detail.startswith("failed: signing in failed: the identity provider refused the token")
    assert "invalid_grant" in detail and "has expired" in detail
    assert ID_TOKEN not in detail and IDP_SECRET not in detail
    [exchange] = idp.requests
    sent = form(exchange)
    assert sent["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
    assert sent["requested_token_type"] == "urn:ietf:params:oauth:token-type:id-jag"
    assert sent["subject_token_type"] == "urn:ietf:params:oauth:token-type:id_token"
    assert (sent["subject_token"], sent["client_id"], sent["client_secret"]) == (
        ID_TOKEN, "totem-at-idp", IDP_SECRET)
    assert (sent["audience"], sent["resource"]) == (mcp.url, f"{mcp.url}/mcp")
    assert ("POST", "/token") not in [(r.method, r.path) for r in mcp.requests]
    logs = "".join(p.read_text(errors="replace") for p in (tmp_path / "logs").rglob("*")
                   if p.is_file())
    stored = (secrets / "totem" / "keys.json")
    for text in (logs, stored.read_text() if stored.exists() else ""):
        assert ID_TOKEN not in text and IDP_SECRET not in text and CLIENT_SECRET not in text


def test_metadata_for_another_resource_gets_no_id_token(tmp_path: Path, secrets: Path) -> None:
    with scripted_server(protected_server("https://elsewhere.example/mcp")) as mcp, \
            scripted_server({("POST", "/token"): lambda seen: refusing_idp()}) as idp:
        detail = asyncio.run(start(tmp_path, cross_app_server(mcp, idp)))
    assert "protected-resource metadata is for https://elsewhere.example/mcp" in detail
    assert idp.requests == []


def test_a_configured_issuer_is_the_only_authorization_server_asked(
    tmp_path: Path, secrets: Path
) -> None:
    with scripted_server(protected_server()) as mcp, \
            scripted_server({("POST", "/token"): lambda seen: refusing_idp()}) as idp:
        asyncio.run(start(tmp_path, cross_app_server(mcp, idp, issuer=mcp.url)))
    paths = [r.path for r in mcp.requests]
    assert "/.well-known/oauth-protected-resource/mcp" not in paths  # the server is not asked
    assert form(idp.requests[0])["audience"] == mcp.url


def test_the_id_token_goes_only_over_https_or_to_this_machine(secrets: Path) -> None:
    idp = IdentityProvider(token_endpoint="http://idp.example.org/token", client_id="c",
                           id_token=Secret("${env:XAA_ID}"))
    with pytest.raises(OAuthFlowError, match="not https"):
        asyncio.run(request_id_jag(idp, audience="https://as.example", resource="https://r/mcp"))


def test_the_id_token_may_come_from_a_command_run_at_each_exchange(
    tmp_path: Path, secrets: Path
) -> None:
    fresh = "eyJ.a-token-the-identity-providers-tool-printed.sig"
    good = (sys.executable, "-c", f"print({fresh!r})")
    bad = (sys.executable, "-c", "import sys; sys.stderr.write('not signed in to the IdP\\n'); "
           "sys.exit(3)")
    with scripted_server(protected_server()) as mcp, \
            scripted_server({("POST", "/token"): lambda seen: refusing_idp()}) as idp:
        server = cross_app_server(mcp, idp)
        assert server.oauth.idp is not None
        for command in (good, bad):
            oauth = dataclasses.replace(server.oauth, idp=dataclasses.replace(
                server.oauth.idp, id_token=None, id_token_command=command))
            detail = asyncio.run(start(tmp_path, dataclasses.replace(server, oauth=oauth)))
            assert "refused the token exchange" in detail if command is good else (
                "exited with 3 and no ID token: not signed in to the IdP" in detail)
    [exchange] = idp.requests  # the failing command sent nothing
    assert form(exchange)["subject_token"] == fresh
