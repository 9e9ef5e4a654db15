"""Amazon Bedrock through the Converse stream API: the provider half.

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
import os
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Unpack
from urllib.parse import quote

import httpx

from totem.providers.base import AuthError, ModelRequest, ProviderError, RetryableError, StreamEvent
from totem.providers.transport.eventstream import EventStreamError, aiter_messages
from totem.providers.transport.http import (
    HttpOptions,
    HttpProvider,
    decode_stream,
    json_body,
    json_object,
)
from totem.providers.transport.retry import error_message
from totem.providers.wire.bedrock import (
    ConverseStreamState,
    decode,
    exception_error,
    finish,
    from_wire,
    to_wire,
)

if TYPE_CHECKING:
    from totem.settings.config import ProviderConfig

__all__ = ["BedrockProvider", "ConverseStreamState", "exception_error", "finish", "from_wire",
           "to_wire"]

TOKEN_ENV = "AWS_BEARER_TOKEN_BEDROCK"


def _region(region: str | None, options: Mapping[str, Any]) -> str:
    value = region or options.get("region") or os.environ.get("AWS_REGION")
    return str(value or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1")


class BedrockProvider(HttpProvider):
    """A configured Bedrock account: region, base URL, bearer token or AWS credentials."""

    def __init__(
        self,
        name: str,
        base_url: str = "",
        *,
        region: str | None = None,
        **kwargs: Unpack[HttpOptions],
    ) -> None:
        self.region = _region(region, kwargs.get("options") or {})
        super().__init__(name, base_url, **kwargs)
        self.credential_resets = 0  # how often a 403 made us resolve credentials again
        self._token: str | None = None
        self._token_read = False
        self._credentials: Any = None  # botocore credentials, resolved on first use

    def _root(self, base_url: str) -> str:
        return (base_url or f"https://bedrock-runtime.{self.region}.amazonaws.com").rstrip("/")

    def __repr__(self) -> str:
        auth = "bearer" if self._api_key or os.environ.get(TOKEN_ENV) else "aws"
        return f"BedrockProvider(name={self.name!r}, region={self.region!r}, auth={auth})"

    def _headers(self) -> dict[str, str]:
        """Without the key: `_authorize` adds the token or the signature."""
        return {"User-Agent": "totem", **self.headers}

    def _secret(self) -> str | None:
        return self._token

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

    def _key_hint(self) -> str:
        if self._token:
            return f" (check the bearer token of provider {self.name})"
        return f" (check the AWS credentials and region {self.region} of {self.name})"

    def _http_error(self, response: httpx.Response, body: bytes) -> ProviderError:
        kind = response.headers.get("x-amzn-errortype", "").partition(":")[0]
        message = error_message(body, response.reason_phrase or "error")
        return self._status_error(response, message, kind=kind)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        body = json_body(to_wire(request, options=self.options, provider=self.name))
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
        headers = {**self._headers(), "Content-Type": "application/json"}
        headers = await self._authorize("POST", url, body, headers)
        async with self._post_stream(url, body, headers=headers) as response:
            try:
                messages = aiter_messages(response.aiter_bytes())
                async for event in decode_stream(messages, ConverseStreamState(), decode, finish):
                    yield event
            except EventStreamError as exc:
                raise RetryableError(f"malformed event stream: {exc}") from None

    async def list_models(self) -> list[str]:
        """The model ids of GET {control plane}/foundation-models."""
        control = str(self.options.get("control_url")
                      or f"https://bedrock.{self.region}.amazonaws.com").rstrip("/")
        url = f"{control}/foundation-models"
        headers = await self._authorize("GET", url, b"", {"User-Agent": "totem"})
        response = await self._get(url, headers=headers)
        summaries = json_object(response, "model list from Bedrock").get("modelSummaries") or []
        return [str(m["modelId"]) for m in summaries if isinstance(m, dict) and "modelId" in m]


def from_config(cfg: ProviderConfig, key: str | None) -> BedrockProvider:
    """The registry's entry point (every adapter module has one)."""
    return BedrockProvider.from_config(cfg, key)
