"""Signing in to an HTTP MCP server with OAuth 2.1, through the SDK's `OAuthClientProvider`.

The SDK does the protocol: on the server's 401 it discovers the protected-resource and
authorization-server metadata, registers a client (dynamic registration, a configured client
id, or a client-id URL), sends the person to the authorization endpoint with PKCE, trades
the code for tokens, and refreshes them when they expire. totem supplies the rest:

    KeyStoreTokens     where the tokens and the registration live (oauth_store.py, 0600)
    SignIn             the question before the browser opens, and how it opens
    LoopbackReceiver   http://127.0.0.1:PORT/callback, where the browser brings the code

A machine signs in with its own credentials instead (`grant: client_credentials`), and a
person of a company with an identity provider through it (`grant: cross_app_access`,
cross_app.py); neither opens a browser.

With nobody to ask (a headless run) no browser is opened: the server fails to start with
the advice to run `totem mcp login NAME` once; later runs use the stored tokens.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata
from pydantic import AnyUrl

from totem import __version__
from totem.mcp.config import HttpServer, resolve_secrets
from totem.mcp.oauth_store import KeyStoreTokens

__all__ = ["LoopbackReceiver", "SignIn", "SignInError", "login_advice", "oauth_auth"]

SIGN_IN_TIMEOUT = 300.0  # seconds the person has to finish in the browser
CALLBACK_PATH = "/callback"
DONE_PAGE = (
    "<!doctype html><meta charset=utf-8><title>totem</title>"
    "<p>{text} You can close this tab and go back to totem.</p>"
)

Ask = Callable[[str, str], Awaitable[bool]]  # (server, where) -> may the browser open?
Opener = Callable[[str], Awaitable[None]]  # opens the authorization URL in a browser


class SignInError(Exception):
    """Signing in could not be done (refused, nobody to ask, timed out, denied)."""


async def open_in_browser(url: str) -> None:
    """The person's browser (the standard library's choice of it)."""
    import webbrowser

    await asyncio.to_thread(webbrowser.open, url)


class SignIn:
    """How a sign-in reaches the person: `ask` first (None: nobody can be asked), then
    `open_url`; `tell` shows the address, for when no browser opens by itself."""

    def __init__(
        self,
        *,
        ask: Ask | None,
        open_url: Opener = open_in_browser,
        tell: Callable[[str], None] | None = None,
        timeout: float = SIGN_IN_TIMEOUT,
    ) -> None:
        self.ask = ask
        self.open_url = open_url
        self.tell = tell
        self.timeout = timeout
        self._began: float | None = None  # when the sign-in now in progress began
        self._spent = 0.0  # seconds of earlier sign-ins, finished

    @property
    def in_progress(self) -> bool:
        return self._began is not None

    def begin(self) -> None:
        if self._began is None:
            self._began = time.monotonic()

    def end(self) -> None:
        if self._began is not None:
            self._spent += time.monotonic() - self._began
            self._began = None

    def person_time(self) -> float:
        """Seconds spent with the person so far (the one in progress counted to now): the
        server's startup deadline is moved on by them, the person's time is not the server's."""
        now = time.monotonic()
        return self._spent + (now - self._began if self._began is not None else 0.0)


class LoopbackReceiver:
    """A one-request HTTP listener on 127.0.0.1 that takes the authorization response."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None
        self._server: asyncio.Server | None = None

    async def open(self) -> None:
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)

    async def result(self, timeout: float) -> AuthorizationCodeResult:
        assert self._result is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), timeout)
        except TimeoutError:
            raise SignInError(f"the sign-in was not finished within {timeout:g} s") from None
        finally:
            await self.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)).strip():
                pass  # the headers say nothing we need
        except (TimeoutError, ConnectionError):
            writer.close()
            return
        parts = line.split()
        target = urlsplit(parts[1]) if len(parts) >= 2 else urlsplit("/")
        query = {k: v[0] for k, v in parse_qs(target.query).items()}
        status, text = self._take(target.path, query)
        body = DONE_PAGE.format(text=text).encode()
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body
        )
        try:
            await writer.drain()
        finally:
            writer.close()

    def _take(self, path: str, query: dict[str, str]) -> tuple[str, str]:
        future = self._result
        if path != CALLBACK_PATH or future is None or future.done():
            return "404 Not Found", "Nothing to do here."
        if "code" in query:
            future.set_result(AuthorizationCodeResult(
                code=query["code"], state=query.get("state"), iss=query.get("iss")))
            return "200 OK", "Signed in."
        reason = query.get("error_description") or query.get("error") or "no code was given"
        future.set_exception(SignInError(f"the authorization server said: {reason}"))
        return "400 Bad Request", "Signing in failed."


def _client_credentials(server: HttpServer, tokens: KeyStoreTokens) -> httpx2.Auth:
    """A machine's sign-in: the client's secret, or a JWT signed with its private key."""
    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    settings = server.oauth
    assert settings.client_id is not None
    secrets = resolve_secrets({k: v for k, v in (("secret", settings.client_secret),
                                                  ("key", settings.private_key)) if v},
                              what=server.name)
    if "key" in secrets:
        signed = SignedJWTParameters(issuer=settings.client_id, subject=settings.client_id,
                                     signing_algorithm=settings.signing_algorithm,
                                     signing_key=secrets["key"])
        return PrivateKeyJWTOAuthProvider(
            server.url, tokens, settings.client_id,
            assertion_provider=signed.create_assertion_provider(), scope=settings.scope)
    return ClientCredentialsOAuthProvider(server.url, tokens, settings.client_id,
                                          secrets["secret"], scope=settings.scope)


def login_advice(server: str, where: str) -> str:
    return (f"it asks you to sign in (at {where}), and nobody can be asked here; run "
            f"`totem mcp login {server}` once, and later runs use the stored tokens")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Provider(OAuthClientProvider):
    """The SDK's provider, told when stored tokens expire (it only knows that of tokens it
    got itself), so that a later run refreshes an expired token before its first request."""

    def __init__(self, tokens: KeyStoreTokens, **kwargs: object) -> None:
        super().__init__(storage=tokens, **kwargs)  # type: ignore[arg-type]
        self._tokens = tokens

    async def _initialize(self) -> None:
        await super()._initialize()
        if self.context.current_tokens is not None:
            self.context.token_expiry_time = self._tokens.expires_at()


def _port_of(uri: str | None) -> int | None:
    if not uri:
        return None
    parts = urlsplit(uri)
    return parts.port if parts.hostname == "127.0.0.1" else None


def oauth_auth(server: HttpServer, sign_in: SignIn) -> httpx2.Auth:
    """The httpx auth that signs in to `server` when it answers 401, keeping the tokens in
    the key store."""
    settings = server.oauth
    tokens = KeyStoreTokens(server.name, server.url)
    if settings.grant == "client_credentials":
        return _client_credentials(server, tokens)
    if settings.grant == "cross_app_access":
        from totem.mcp.cross_app import CrossAppAccessAuth

        return CrossAppAccessAuth(server, tokens)
    port = settings.callback_port or _port_of(tokens.redirect_uri()) or free_port()
    redirect = f"http://127.0.0.1:{port}{CALLBACK_PATH}"
    if settings.client_id:
        tokens.configured = _registered_client(server, redirect)
    step = _BrowserStep(server.name, sign_in, LoopbackReceiver(port))
    metadata = OAuthClientMetadata(
        client_name="totem",
        software_id="totem",
        software_version=__version__,
        redirect_uris=[AnyUrl(redirect)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope=settings.scope,
    )
    return _Provider(
        tokens,
        server_url=server.url,
        client_metadata=metadata,
        redirect_handler=step.redirect,
        callback_handler=step.callback,
        client_metadata_url=settings.client_metadata_url,
    )


def _registered_client(server: HttpServer, redirect: str) -> OAuthClientInformationFull:
    """The client registered beforehand (`oauth: {client_id: ...}`), never stored."""
    settings = server.oauth
    assert settings.client_id is not None
    secret = (resolve_secrets({"client_secret": settings.client_secret}, what=server.name)
              ["client_secret"] if settings.client_secret else None)
    return OAuthClientInformationFull(
        client_id=settings.client_id,
        client_secret=secret,
        redirect_uris=[AnyUrl(redirect)],
        token_endpoint_auth_method="client_secret_basic" if secret else "none",
    )


class _BrowserStep:
    """The SDK's redirect and callback handlers: ask, listen on the loopback address, open
    the browser; then wait for the code."""

    def __init__(self, server: str, sign_in: SignIn, receiver: LoopbackReceiver) -> None:
        self.server = server
        self.sign_in = sign_in
        self.receiver = receiver

    async def redirect(self, url: str) -> None:
        sign_in = self.sign_in
        where = urlsplit(url).netloc
        if sign_in.ask is None:
            raise SignInError(login_advice(self.server, where))
        sign_in.begin()
        try:
            if not await sign_in.ask(self.server, where):
                raise SignInError("signing in was declined")
            await self.receiver.open()
            if sign_in.tell is not None:
                sign_in.tell(f"Sign in to the MCP server '{self.server}' in the browser: {url}")
            await sign_in.open_url(url)
        except BaseException:
            sign_in.end()
            await self.receiver.close()
            raise

    async def callback(self) -> AuthorizationCodeResult:
        try:
            return await self.receiver.result(self.sign_in.timeout)
        finally:
            self.sign_in.end()
