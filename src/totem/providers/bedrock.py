"""Amazon Bedrock through the Converse stream API (SPEC P5): the provider half.

The mapping lives in `bedrock_wire.py` (pure functions, re-exported here); this module adds
HTTP: POST {base}/model/{modelId}/converse-stream, its AWS event stream decoded by
`eventstream.py`, GET {control plane}/foundation-models, and every failure turned into the
errors of `base.py`. It never retries, except for the one 403 rule below (`retry.py` does).

Auth, the first that is set: a bearer token (the provider's key, then the environment
variable AWS_BEARER_TOKEN_BEDROCK), else SigV4 with the AWS credential chain (environment,
profiles, SSO, container, instance metadata), through botocore, imported only then. On an
HTTP 403 the token and credentials are resolved again, once, and the request sent once
more: expired session credentials or a rotated token then heal without a restart.

Options (besides those of `bedrock_wire.py`):

    region       AWS region (else AWS_REGION, AWS_DEFAULT_REGION, us-east-1)
    profile      the AWS profile for the credential chain
    control_url  base URL of the control plane for `list_models`
                 (default https://bedrock.{region}.amazonaws.com)

The bearer token appears in no message and no repr; AWS secrets never leave botocore.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from totem.providers.base import (
    AuthError,
    InvalidRequest,
    ModelRequest,
    ProviderError,
    RetryableError,
    StreamEvent,
)
from totem.providers.bedrock_wire import (
    ConverseStreamState,
    decode,
    exception_error,
    finish,
    from_wire,
    to_wire,
)
from totem.providers.eventstream import EventStreamDecoder, EventStreamError
from totem.providers.retry import classify_status, error_message, parse_retry_after

if TYPE_CHECKING:
    from totem.config import ProviderConfig

__all__ = ["BedrockProvider", "ConverseStreamState", "exception_error", "finish", "from_wire",
           "to_wire"]

TOKEN_ENV = "AWS_BEARER_TOKEN_BEDROCK"


async def _read_stream(response: httpx.Response) -> AsyncIterator[StreamEvent]:
    decoder = EventStreamDecoder()
    state = ConverseStreamState()
    try:
        async for chunk in response.aiter_bytes():
            for message in decoder.feed(chunk):
                for event in decode(message, state):
                    yield event
        decoder.close()
    except EventStreamError as exc:
        raise RetryableError(f"malformed event stream: {exc}") from None
    for event in finish(state):
        yield event


def _region(region: str | None, options: Mapping[str, Any]) -> str:
    value = region or options.get("region") or os.environ.get("AWS_REGION")
    return str(value or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1")


class BedrockProvider:
    """A configured Bedrock account: region, base URL, bearer token or AWS credentials."""

    def __init__(
        self,
        name: str,
        base_url: str = "",
        *,
        api_key: str | None = None,
        region: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        options: Mapping[str, Any] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = name
        self.options = {k: v for k, v in (options or {}).items() if k != "headers"}
        self.region = _region(region, self.options)
        default = f"https://bedrock-runtime.{self.region}.amazonaws.com"
        self.base_url = (base_url or default).rstrip("/")
        self.headers = dict(headers or {})
        self.timeout = float(timeout or self.options.get("timeout") or 300.0)
        self.credential_resets = 0  # how often a 403 made us resolve credentials again
        self._api_key = api_key or None
        self._token: str | None = None
        self._token_read = False
        self._credentials: Any = None  # botocore credentials, resolved on first use
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    @classmethod
    def from_config(cls, cfg: ProviderConfig, key: str | None) -> BedrockProvider:
        options = cfg.options
        return cls(
            cfg.name,
            cfg.base_url,
            api_key=key,
            region=str(options["region"]) if options.get("region") else None,
            headers={str(k): str(v) for k, v in (options.get("headers") or {}).items()},
            options=options,
        )

    def __repr__(self) -> str:
        auth = "bearer" if self._api_key or os.environ.get(TOKEN_ENV) else "aws"
        return f"BedrockProvider(name={self.name!r}, region={self.region!r}, auth={auth})"

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout, connect=10.0, write=30.0),
                limits=httpx.Limits(max_keepalive_connections=8, keepalive_expiry=60.0),
                transport=self._transport,
                verify=not self.base_url.startswith("http://"),
            )
        return self._client

    def _bearer(self) -> str | None:
        if not self._token_read:
            self._token = self._api_key or os.environ.get(TOKEN_ENV) or None
            self._token_read = True
        return self._token

    def _reset_credentials(self) -> None:
        self._token_read = False
        self._credentials = None
        self.credential_resets += 1

    async def _authorize(
        self, method: str, url: str, body: bytes, headers: dict[str, str]
    ) -> dict[str, str]:
        token = self._bearer()
        if token:
            return {**headers, "Authorization": f"Bearer {token}"}
        # Resolving credentials may read files or ask a metadata service: not on the loop.
        return await asyncio.to_thread(self._sign, method, url, body, headers)

    def _sign(self, method: str, url: str, body: bytes, headers: dict[str, str]) -> dict[str, str]:
        try:
            from botocore.auth import SigV4Auth  # type: ignore[import-untyped,unused-ignore]
            from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped,unused-ignore]
            from botocore.session import Session  # type: ignore[import-untyped,unused-ignore]
        except ImportError:
            raise AuthError(
                f"provider {self.name} has no bearer token (key or {TOKEN_ENV}), and AWS "
                "credentials need botocore: pip install botocore"
            ) from None
        from botocore.exceptions import BotoCoreError  # type: ignore[import-untyped,unused-ignore]

        try:
            if self._credentials is None:
                profile = self.options.get("profile")
                self._credentials = Session(profile=str(profile) if profile else None
                                            ).get_credentials()
            frozen = self._credentials.get_frozen_credentials() if self._credentials else None
        except BotoCoreError as exc:
            raise AuthError(f"provider {self.name}: AWS credentials: {exc}") from None
        if frozen is None:
            raise AuthError(
                f"provider {self.name}: no bearer token (key or {TOKEN_ENV}) and no AWS "
                "credentials found (environment, profile, SSO or instance role)"
            )
        request = AWSRequest(method=method, url=url, data=body, headers=headers)
        SigV4Auth(frozen, "bedrock", self.region).add_auth(request)
        return {str(k): str(v) for k, v in request.headers.items()}

    def _redact(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text

    def _network_error(self, exc: Exception) -> ProviderError:
        detail = str(exc) or type(exc).__name__
        if isinstance(exc, httpx.UnsupportedProtocol):
            return InvalidRequest(self._redact(f"invalid base URL {self.base_url!r}: {detail}"))
        if isinstance(exc, httpx.ConnectError):
            detail = f"cannot connect to {self.base_url} ({detail})"
        elif isinstance(exc, httpx.TimeoutException):
            detail = f"{type(exc).__name__}: no answer from {self.base_url} in time"
        return RetryableError(self._redact(f"network: {detail}"))

    def _http_error(self, response: httpx.Response, body: bytes) -> ProviderError:
        status = response.status_code
        kind = response.headers.get("x-amzn-errortype", "").partition(":")[0]
        message = error_message(body, response.reason_phrase or "error")
        text = self._redact(f"HTTP {status}{f' {kind}' if kind else ''}: {message}")
        hint = (f" (check the bearer token of provider {self.name})" if self._token
                else f" (check the AWS credentials and region {self.region} of {self.name})")
        return classify_status(status, text, retry_after=parse_retry_after(response.headers),
                               key_hint=hint)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        body = json.dumps(to_wire(request, options=self.options, provider=self.name),
                          ensure_ascii=False).encode("utf-8")
        url = f"{self.base_url}/model/{quote(request.model, safe='')}/converse-stream"
        for attempt in (1, 2):
            try:
                async for event in self._converse(url, body):
                    yield event
                return
            except AuthError as exc:
                if attempt == 2 or exc.status != 403:  # only an HTTP 403, never mid-stream
                    raise
            self._reset_credentials()

    async def _converse(self, url: str, body: bytes) -> AsyncIterator[StreamEvent]:
        # The headers boto3 sends (and signs: content-type, host, x-amz-date), no more.
        headers = {"User-Agent": "totem", **self.headers, "Content-Type": "application/json"}
        headers = await self._authorize("POST", url, body, headers)
        try:
            async with self._http().stream("POST", url, content=body, headers=headers) as response:
                if response.status_code >= 400:
                    raise self._http_error(response, await response.aread())
                async for event in _read_stream(response):
                    yield event
        except httpx.RequestError as exc:
            raise self._network_error(exc) from None
        except httpx.InvalidURL as exc:
            raise InvalidRequest(self._redact(f"invalid base URL: {exc}")) from None
        except ProviderError as exc:  # a server may echo the token in its own message
            if self._token and self._token in exc.message:
                exc.message = self._redact(exc.message)
                exc.args = (exc.message,)
            raise

    async def list_models(self) -> list[str]:
        """The model ids of GET {control plane}/foundation-models."""
        control = str(self.options.get("control_url")
                      or f"https://bedrock.{self.region}.amazonaws.com").rstrip("/")
        url = f"{control}/foundation-models"
        headers = await self._authorize("GET", url, b"", {"User-Agent": "totem"})
        try:
            response = await self._http().get(url, headers=headers)
        except httpx.RequestError as exc:
            raise self._network_error(exc) from None
        if response.status_code >= 400:
            raise self._http_error(response, response.content)
        try:
            summaries = response.json().get("modelSummaries") or []
        except (ValueError, AttributeError):
            raise RetryableError("malformed model list from Bedrock") from None
        return [str(m["modelId"]) for m in summaries if isinstance(m, dict) and "modelId" in m]

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()


def from_config(cfg: ProviderConfig, key: str | None) -> BedrockProvider:
    """The registry's entry point (every adapter module has one)."""
    return BedrockProvider.from_config(cfg, key)
