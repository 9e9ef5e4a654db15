"""The one retry policy, shared by every adapter.

`stream_with_retry(open_stream, abort=...)` opens a provider stream and passes its events
through. A transient failure (`RetryableError`, or a network error from httpx that leaked
out of an adapter) is retried with exponential backoff, 1 s doubling up to a 60 s cap with
±30 % jitter, or after the `retry_after` the provider asked for; up to `max_tries` tries.
The rules that keep output honest:

- a failure *before* the first event is retried, even a stream that simply ended;
- a failure *after* an event was passed on is raised: retrying would show the start of
  the answer twice as if it were one answer. A caller that can restart the answer
  honestly (keep the cut one apart, say so) passes `on_cut`: then such a failure is retried
  too, within the same tries, and `on_cut` is called instead of `on_retry`;
- a `FatalError` (bad key, invalid request) is raised at once;
- a `LocalServerDown` (nothing answers at a local address) is retried twice, within about
  two seconds, then raised: a server that is not started will not start by waiting;
- the wait between tries ends early with `Aborted` when the run's abort signal fires.

`sleep` and `rng` are injectable so that tests run the policy in no time, without patching.

Adapters classify HTTP failures with the helpers at the end (`classify_status`,
`parse_retry_after`, `error_message`), so that every provider draws the line between
transient and fatal in the same place.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TypeVar

from totem.abort import AbortSignal
from totem.providers.base import (
    AuthError,
    FatalError,
    InvalidRequest,
    LocalServerDown,
    ProviderError,
    RateLimited,
    RetryableError,
    StreamEvent,
)

__all__ = [
    "backoff_delay",
    "call_with_retry",
    "classify_status",
    "error_message",
    "parse_retry_after",
    "stream_with_retry",
]

T = TypeVar("T")
JITTER = 0.3
LOCAL_TRIES = 3  # a local server that refuses the connection: two retries, then the error
LOCAL_BASE = 0.5
LOCAL_CAP = 1.0


def backoff_delay(
    attempt: int,
    *,
    retry_after: float | None = None,
    base: float = 1.0,
    cap: float = 60.0,
    rng: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait after failed try number `attempt` (1 for the first try).

    The provider's `retry_after` wins when given (no jitter: it knows best); otherwise
    `base * 2 ** (attempt - 1)` with ±30 % jitter, never more than `cap`.
    """
    if retry_after is not None:
        return max(0.0, retry_after)
    exponent = min(max(attempt - 1, 0), 62)
    delay = min(cap, base * 2.0**exponent)
    jitter = 1.0 + JITTER * (2.0 * rng() - 1.0)
    return max(0.0, min(cap, delay * jitter))


def _as_retryable(exc: BaseException) -> RetryableError | None:
    """The retryable form of `exc`, or None when it must not be retried."""
    if isinstance(exc, RetryableError):
        return exc
    if isinstance(exc, FatalError):
        return None
    # httpx is looked up, not imported: if no adapter loaded it, none of its errors can leak.
    httpx = sys.modules.get("httpx")
    if httpx is not None and isinstance(exc, httpx.TransportError):
        return RetryableError(f"network: {type(exc).__name__}: {exc}".rstrip(": "))
    if isinstance(exc, ConnectionError):
        return RetryableError(f"network: {exc or type(exc).__name__}")
    return None


def _policy(
    error: RetryableError, *, max_tries: int, base: float, cap: float
) -> tuple[int, float, float]:
    """How many tries `error` gets, and the base and cap of its waits: a local server that
    is down gets a few short ones."""
    if isinstance(error, LocalServerDown):
        return min(max_tries, LOCAL_TRIES), min(base, LOCAL_BASE), min(cap, LOCAL_CAP)
    return max_tries, base, cap


async def _wait(
    delay: float, abort: AbortSignal, sleep: Callable[[float], Awaitable[object]]
) -> None:
    """Sleep `delay` seconds unless the abort signal fires first (then raise `Aborted`)."""
    abort.check()
    if delay <= 0:
        return
    sleeper = asyncio.ensure_future(sleep(delay))
    watcher = asyncio.ensure_future(abort.wait())
    try:
        await asyncio.wait({sleeper, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (sleeper, watcher):
            task.cancel()
        await asyncio.gather(sleeper, watcher, return_exceptions=True)
    abort.check()


async def stream_with_retry(
    open_stream: Callable[[], AsyncIterator[StreamEvent]],
    *,
    abort: AbortSignal,
    on_retry: Callable[[RetryableError, int, float], None] | None = None,
    on_cut: Callable[[RetryableError, int, float], None] | None = None,
    max_tries: int = 10,
    base: float = 1.0,
    cap: float = 60.0,
    max_retry_after: float = 300.0,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    rng: Callable[[], float] = random.random,
) -> AsyncIterator[StreamEvent]:
    """The events of `open_stream()`, retried on transient failures (see the module doc).

    `on_retry(error, attempt, delay)` is called before each wait, `attempt` being the number
    of the try that failed; `on_cut`, with the same arguments, instead when that try had
    passed events on (without it, such a failure is raised). A provider asking to wait
    longer than `max_retry_after` seconds (a daily quota, say) is not waited for: its error
    is raised with that wait in it.
    """
    attempt = 0
    while True:
        abort.check()
        attempt += 1
        yielded = False
        stream: AsyncIterator[StreamEvent] | None = None
        try:
            stream = open_stream()
            async for event in stream:
                yielded = True
                yield event
            return
        except Exception as exc:
            error = _as_retryable(exc)
            if error is None:
                raise
            tries, first, most = _policy(error, max_tries=max_tries, base=base, cap=cap)
            delay = backoff_delay(
                attempt, retry_after=error.retry_after, base=first, cap=most, rng=rng
            )
            too_long = error.retry_after is not None and error.retry_after > max_retry_after
            if too_long:
                error.message = f"{error.message} (the provider asks to wait {delay:.0f} s)"
                error.args = (error.message,)
            if (yielded and on_cut is None) or attempt >= tries or too_long:
                if error is exc:
                    raise
                raise error from exc
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
        report = on_cut if yielded else on_retry
        if report is not None:
            report(error, attempt, delay)
        await _wait(delay, abort, sleep)


async def call_with_retry(
    call: Callable[[], Awaitable[T]],
    *,
    abort: AbortSignal,
    max_tries: int = 5,
    max_retry_after: float = 60.0,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> T:
    """`await call()`, retried like a stream that fails before its first event: for one
    request that is not streamed (a tool's call to a web API). Its waits are the same, its
    tries and its longest `retry_after` smaller, as a person is waiting on a tool."""

    async def once() -> AsyncIterator[StreamEvent]:
        found.append(await call())
        return
        yield  # an async generator that yields nothing

    found: list[T] = []
    async for _ in stream_with_retry(once, abort=abort, max_tries=max_tries,
                                     max_retry_after=max_retry_after, sleep=sleep):
        pass
    return found[-1]


# -- classifying HTTP failures, for adapters ---------------------------------------------


def classify_status(
    status: int, message: str, *, retry_after: float | None = None, key_hint: str = ""
) -> ProviderError:
    """The error for an HTTP status; `message` is the provider's own words."""
    if status in (401, 403):
        return AuthError(f"{message}{key_hint}", status=status)
    if status in (400, 404, 413, 422):
        return InvalidRequest(message, status=status)
    if status in (429, 529):
        return RateLimited(message, status=status, retry_after=retry_after)
    if status in (408, 409, 425) or status >= 500:
        return RetryableError(message, status=status, retry_after=retry_after)
    return FatalError(message, status=status)


def error_message(body: bytes, fallback: str) -> str:
    """The provider's message from an error body (OpenAI's shape and the usual others)."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:500] or fallback
    if isinstance(data, dict):
        for value in (data.get("error"), data.get("message"), data.get("detail")):
            if isinstance(value, dict) and value.get("message"):
                return str(value["message"])
            if isinstance(value, str) and value:
                return value
    return text[:500] or fallback


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import time
    from email.utils import parsedate_to_datetime  # only for the rare date form

    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None
