"""The HTTP half that every adapter shares: client, key, failures, streaming POST.

A provider owns auth, base URL and the HTTP client; the adapter module beside it owns the
wire mapping. `HttpProvider` is the base of the adapters' provider classes and does, the
same way for each of them:

- one `httpx.AsyncClient`, made on first use (timeouts, pool limits, the `transport` seam
  that tests use, no CA bundle for a plain-http base URL) and closed by `aclose()`;
- the key: sent in the header the class names (`key_header`, `key_scheme`), shown in no
  message and no repr (`_redact`, and `_scrub` for a server that echoes it back);
- failures as the errors of `base.py`: `_network_error` (nothing listens, a timeout, a URL
  without a scheme; `LocalServerDown` when nothing answers at a local address) and
  `_http_error` (a status, through `retry.classify_status`, in the
  provider's own words, with a hint about the key on a 401 or 403);
- `_post_stream(url, body)`: a streaming POST, an async context manager that yields the
  response once its status says success and maps every failure until the end of the
  `async with` block as above; `_get(url)`, the same for a GET.

An adapter adjusts it with class attributes and small hooks: `_root()` (the base URL kept),
`_key_hint()` (said on a 401 or 403), `_missed(request)` (added to a 404), `_secret()`
(what to redact), or its own `_http_error` built on `_status_error` for an API with its own
error shape. The functions at the end read what comes back: `sse_data` (the data of each
SSE event), `decode_stream` (pieces through the adapter's `from_wire`, then `finish`),
`json_stream` (the same for JSON chunks), `or_whole_answer` (a server that answered one
JSON document instead of a stream), `json_object` (a model list).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self, TypedDict, TypeVar

import httpx

from totem.providers.base import (
    InvalidRequest,
    LocalServerDown,
    ProviderError,
    RetryableError,
    StreamEvent,
)
from totem.providers.localserver.address import is_local_url, nothing_answers
from totem.providers.transport.retry import classify_status, error_message, parse_retry_after
from totem.providers.transport.sse import aiter_sse

if TYPE_CHECKING:
    from totem.settings.config import ProviderConfig

__all__ = [
    "HttpOptions",
    "HttpProvider",
    "StreamState",
    "decode_stream",
    "json_body",
    "json_object",
    "json_or_none",
    "json_stream",
    "not_a_stream",
    "or_whole_answer",
    "sse_data",
]

ErrorMapper = Callable[[httpx.Response, bytes], ProviderError]


class HttpOptions(TypedDict, total=False):
    """The keyword arguments of `HttpProvider`, for a subclass that adds its own."""

    api_key: str | None
    headers: Mapping[str, str] | None
    timeout: float | None
    options: Mapping[str, Any] | None
    transport: httpx.AsyncBaseTransport | None


class HttpProvider:
    """A configured HTTP endpoint: name, base URL, optional key, extra headers, options."""

    default_base_url: ClassVar[str] = ""
    default_timeout: ClassVar[float] = 300.0
    key_header: ClassVar[str] = "Authorization"  # the header that carries the key, if set
    key_scheme: ClassVar[str] = "Bearer "
    fixed_headers: ClassVar[Mapping[str, str]] = {}  # sent before the configured headers
    connect_hint: ClassVar[str] = ""  # said after "cannot connect to ..."

    def __init__(
        self,
        name: str,
        base_url: str = "",
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        options: Mapping[str, Any] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = name
        self.options = {k: v for k, v in (options or {}).items() if k != "headers"}
        self.base_url = self._root(base_url)
        self.headers = dict(headers or {})
        self.timeout = float(timeout or self.options.get("timeout") or self.default_timeout)
        self._api_key = api_key or None
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    def _root(self, base_url: str) -> str:
        """The base URL kept, from the one configured (`options` are set by then)."""
        return (base_url or self.default_base_url).rstrip("/")

    @classmethod
    def from_config(cls, cfg: ProviderConfig, key: str | None = None) -> Self:
        """The provider of a configuration entry: its base URL (else the default), `key`,
        and the `headers` among its options."""
        headers = cfg.options.get("headers") or {}
        return cls(
            cfg.name,
            cfg.base_url or cls.default_base_url,
            api_key=key,
            headers={str(k): str(v) for k, v in headers.items()},
            options=cfg.options,
        )

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"{type(self).__name__}(name={self.name!r}, base_url={self.base_url!r}, key={key})"

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            plain = self.base_url.startswith("http://")
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout, connect=10.0, write=30.0),
                # A local server (llama-server) may close an idle connection at any moment;
                # reusing one it closed fails the next request. A new local connection costs
                # a fraction of a millisecond, so plain-http connections are not kept.
                limits=httpx.Limits(
                    max_keepalive_connections=0 if plain else 8, keepalive_expiry=60.0
                ),
                transport=self._transport,
                # A plain-http server (every local one) needs no TLS: skipping the CA bundle
                # saves ~50 ms of start-up. https keeps full verification.
                verify=not plain,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    # the key ----------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"User-Agent": "totem", **self.fixed_headers, **self.headers}
        if self._api_key:
            headers[self.key_header] = f"{self.key_scheme}{self._api_key}"
        return headers

    def _secret(self) -> str | None:
        """What no message may show."""
        return self._api_key

    def _redact(self, text: str) -> str:
        secret = self._secret()
        return text.replace(secret, "***") if secret else text

    def _scrub(self, exc: ProviderError) -> ProviderError:
        """A server may echo the key in its own words: never let it through."""
        secret = self._secret()
        if secret and secret in exc.message:
            exc.message = self._redact(exc.message)
            exc.args = (exc.message,)
        return exc

    # failures ---------------------------------------------------------------------------------

    def _network_error(self, exc: Exception) -> ProviderError:
        detail = str(exc) or type(exc).__name__
        if isinstance(exc, httpx.UnsupportedProtocol):
            return InvalidRequest(self._redact(f"invalid base URL {self.base_url!r}: {detail}"))
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout) and is_local_url(
            self.base_url
        ):
            return LocalServerDown(self._redact(f"{nothing_answers(self.base_url)} ({detail})"))
        if isinstance(exc, httpx.ConnectError):
            detail = f"cannot connect to {self.base_url} ({detail}){self.connect_hint}"
        elif isinstance(exc, httpx.TimeoutException):
            waited = {httpx.ConnectTimeout: 10.0, httpx.WriteTimeout: 30.0}.get(
                type(exc), self.timeout)
            detail = (f"{type(exc).__name__}: no answer from {self.base_url} within "
                      f"{waited:g} s (the provider's `timeout` option sets it)")
        return RetryableError(self._redact(f"network: {detail}"))

    def _key_hint(self) -> str:
        """Said after the message of a 401 or 403."""
        if self._api_key:
            return f" (check the key of provider {self.name})"
        return f" (provider {self.name} has no key set)"

    def _missed(self, request: httpx.Request) -> str:
        """Said after the message of a 404: the request that missed."""
        return f" ({request.method} {request.url})"

    def _http_error(self, response: httpx.Response, body: bytes) -> ProviderError:
        """The error for a failed status, in the provider's own words."""
        message = error_message(body, response.reason_phrase or "error")
        if response.status_code == 404:
            message += self._missed(response.request)
        return self._status_error(response, message)

    def _status_error(
        self, response: httpx.Response, message: str, *, kind: str = "",
        retry_after: float | None = None,
    ) -> ProviderError:
        """`classify_status` of `HTTP {status} {kind}: {message}`; a Retry-After header wins
        over `retry_after`."""
        header = parse_retry_after(response.headers)
        return classify_status(
            response.status_code,
            self._status_text(response, message, kind),
            retry_after=header if header is not None else retry_after,
            key_hint=self._key_hint(),
        )

    def _status_text(self, response: httpx.Response, message: str, kind: str = "") -> str:
        """`HTTP {status} {kind}: {message}`, the key redacted."""
        status = response.status_code
        return self._redact(f"HTTP {status}{f' {kind}' if kind else ''}: {message}")

    # requests ---------------------------------------------------------------------------------

    async def _get(
        self, url: str, *, params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None, check: bool = True,
    ) -> httpx.Response:
        """GET `url` (with `_headers()` unless `headers` are given), a network failure mapped;
        with `check`, a failed status raised as `_http_error`."""
        try:
            response = await self._http().get(
                url, params=params, headers=self._headers() if headers is None else headers
            )
        except httpx.RequestError as exc:
            raise self._network_error(exc) from None
        if check and response.status_code >= 400:
            raise self._scrub(self._http_error(response, response.content))
        return response

    @contextlib.asynccontextmanager
    async def _post_stream(
        self, url: str, body: bytes, *, headers: Mapping[str, str] | None = None,
        on_error: ErrorMapper | None = None,
    ) -> AsyncIterator[httpx.Response]:
        """POST the JSON `body` and stream the answer: the response, once its status says
        success (else `on_error`, by default `_http_error`, of the status and error body).

        Until the end of the `async with` block a transport failure becomes
        `_network_error`, an invalid URL `InvalidRequest`, and a `ProviderError` leaves with
        the key scrubbed from its message.
        """
        if headers is None:
            headers = {**self._headers(), "Content-Type": "application/json"}
        try:
            async with self._http().stream("POST", url, content=body, headers=headers) as response:
                if response.status_code >= 400:
                    raise (on_error or self._http_error)(response, await response.aread())
                yield response
        except httpx.RequestError as exc:
            raise self._network_error(exc) from None
        except httpx.InvalidURL as exc:
            raise InvalidRequest(self._redact(f"invalid base URL: {exc}")) from None
        except ProviderError as exc:
            raise self._scrub(exc) from None


# -- reading answers ---------------------------------------------------------------------------


class StreamState(Protocol):
    """What `json_stream` needs of an adapter's stream state."""

    malformed: list[str]  # the chunks that were not JSON objects, for `finish` to judge


T = TypeVar("T")
S = TypeVar("S")
J = TypeVar("J", bound=StreamState)
Decoder = Callable[[T, S], list[StreamEvent]]


def json_body(data: Any) -> bytes:
    """A request body: `data` as UTF-8 JSON, non-ASCII text as it is."""
    return json.dumps(data, ensure_ascii=False).encode()


def json_or_none(text: str | bytes) -> Any:
    """The JSON value of `text`, or None when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def json_object(response: httpx.Response, what: str) -> dict[str, Any]:
    """The JSON object of a whole answer; `RetryableError("malformed {what}")` otherwise."""
    try:
        data = response.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise RetryableError(f"malformed {what}")
    return data


def not_a_stream(body: bytes) -> RetryableError:
    """The error for a whole answer that the adapter cannot read either."""
    snippet = body[:80].decode("utf-8", "replace")
    return RetryableError(f"malformed response: expected an event stream, got {snippet!r}")


async def sse_data(
    response: httpx.Response, *, until: str | None = None,
    on_until: Callable[[], object] | None = None,
) -> AsyncIterator[str]:
    """The `data` of each server-sent event of `response` (see `sse.aiter_sse`)."""
    async for event in aiter_sse(response.aiter_bytes(), until=until, on_until=on_until):
        yield event.data


async def decode_stream(
    pieces: AsyncIterable[T],
    state: S,
    from_wire: Decoder[T, S],
    finish: Callable[[S], list[StreamEvent]],
) -> AsyncIterator[StreamEvent]:
    """The events of a stream: `from_wire(piece, state)` of each piece, then `finish(state)`."""
    async for piece in pieces:
        for event in from_wire(piece, state):
            yield event
    for event in finish(state):
        yield event


async def json_stream(
    lines: AsyncIterable[str],
    state: J,
    from_wire: Decoder[dict[str, Any], J],
    finish: Callable[[J], list[StreamEvent]],
) -> AsyncIterator[StreamEvent]:
    """`decode_stream` of a stream of JSON objects (SSE data, NDJSON lines): a blank line
    is skipped, and one that is not a JSON object kept in `state.malformed`."""

    async def chunks() -> AsyncIterator[dict[str, Any]]:
        async for line in lines:
            data = line.strip()
            if not data:
                continue
            chunk = json_or_none(data)
            if isinstance(chunk, dict):
                yield chunk
            else:
                state.malformed.append(data)

    async for event in decode_stream(chunks(), state, from_wire, finish):
        yield event


async def or_whole_answer(
    response: httpx.Response,
    streamed: AsyncIterator[StreamEvent],
    whole: Callable[[bytes], list[StreamEvent]],
) -> AsyncIterator[StreamEvent]:
    """The events of `streamed`, or `whole(body)` when the server answered one JSON
    document where a stream was asked for."""
    ctype = response.headers.get("content-type", "")
    if "json" in ctype and "event-stream" not in ctype:
        for event in whole(await response.aread()):
            yield event
    else:
        async for event in streamed:
            yield event
