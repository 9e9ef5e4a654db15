from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence

import httpx
import pytest

from totem.abort import Aborted, AbortSignal
from totem.providers.base import (
    AuthError,
    InvalidRequest,
    LocalServerDown,
    ModelRequest,
    ProviderError,
    RateLimited,
    RetryableError,
    StreamEnd,
    StreamEvent,
    TextChunk,
)
from totem.providers.localserver.address import is_local_url
from totem.providers.openai_chat import OpenAIChatProvider
from totem.providers.transport.retry import backoff_delay, stream_with_retry
from totem.testing.scripted import reply

Step = Sequence[StreamEvent | BaseException]


class Script:
    """Each call of `open` plays the next step: events, and maybe an exception at its point."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.opened = 0
        self.closed = 0

    def open(self) -> AsyncIterator[StreamEvent]:
        step = self.steps[min(self.opened, len(self.steps) - 1)]
        self.opened += 1
        return self._play(step)

    async def _play(self, step: Step) -> AsyncIterator[StreamEvent]:
        try:
            for item in step:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self.closed += 1


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def collect(
    script: Script,
    *,
    abort: AbortSignal | None = None,
    sleep: Callable[[float], object] | None = None,
    **kwargs: object,
) -> tuple[list[StreamEvent], Sleeps, list[tuple[RetryableError, int, float]]]:
    sleeps = Sleeps()
    retries: list[tuple[RetryableError, int, float]] = []

    async def main() -> list[StreamEvent]:
        stream = stream_with_retry(
            script.open,
            abort=abort or AbortSignal(),
            on_retry=lambda e, n, d: retries.append((e, n, d)),
            sleep=sleep or sleeps,  # type: ignore[arg-type]
            rng=lambda: 0.5,
            **kwargs,  # type: ignore[arg-type]
        )
        return [event async for event in stream]

    return asyncio.run(main()), sleeps, retries


def test_backoff_doubles_from_base_to_cap() -> None:
    delays = [backoff_delay(n, retry_after=None, base=1.0, cap=60.0, rng=lambda: 0.5)
              for n in range(1, 10)]
    assert delays == [1, 2, 4, 8, 16, 32, 60, 60, 60]


def test_backoff_jitter_is_thirty_percent_and_never_over_cap() -> None:
    assert backoff_delay(3, retry_after=None, base=1.0, cap=60.0, rng=lambda: 0.0) == pytest.approx(
        2.8
    )
    assert backoff_delay(3, retry_after=None, base=1.0, cap=60.0, rng=lambda: 1.0) == pytest.approx(
        5.2
    )
    assert backoff_delay(9, retry_after=None, base=1.0, cap=60.0, rng=lambda: 1.0) == 60.0
    assert backoff_delay(9, retry_after=None, base=1.0, cap=60.0, rng=lambda: 0.0) == 42.0


def test_backoff_honours_retry_after() -> None:
    assert backoff_delay(1, retry_after=7.5, base=1.0, cap=60.0, rng=lambda: 0.0) == 7.5
    assert backoff_delay(5, retry_after=0, base=1.0, cap=60.0, rng=lambda: 0.0) == 0.0


def test_rate_limit_then_success_yields_the_answer_once() -> None:
    script = Script([RateLimited("slow down", status=429)], reply("hello"))
    events, sleeps, retries = collect(script)
    assert [e.text for e in events if isinstance(e, TextChunk)] == ["hello"]
    assert isinstance(events[-1], StreamEnd)
    assert sleeps.delays == [1.0]
    assert [(type(e), n, d) for e, n, d in retries] == [(RateLimited, 1, 1.0)]
    assert script.opened == 2 and script.closed == 2


def test_retry_after_from_the_provider_is_used() -> None:
    script = Script([RateLimited("slow down", retry_after=7.0)], reply("ok"))
    _, sleeps, _ = collect(script)
    assert sleeps.delays == [7.0]


def test_a_stream_that_breaks_before_any_event_is_retried() -> None:
    script = Script([RetryableError("the stream ended before any output")], reply("ok"))
    events, sleeps, _ = collect(script)
    assert TextChunk("ok") in events
    assert len(sleeps.delays) == 1


def test_a_stream_that_breaks_after_output_is_raised_not_retried() -> None:
    script = Script([TextChunk("partial"), RetryableError("network: cut")], reply("again"))
    with pytest.raises(RetryableError, match="cut"):
        collect(script)
    assert script.opened == 1


def test_with_on_cut_a_stream_cut_after_output_is_retried_and_reported_as_a_cut() -> None:
    script = Script([TextChunk("partial"), RetryableError("network: cut")], reply("again"))
    cuts: list[tuple[str, int, float]] = []
    events, sleeps, retries = collect(script, on_cut=lambda e, n, d: cuts.append((e.message, n, d)))
    assert [e.text for e in events if isinstance(e, TextChunk)] == ["partial", "again"]
    assert cuts == [("network: cut", 1, 1.0)] and not retries
    assert sleeps.delays == [1.0]


def test_cuts_are_bounded_by_the_same_tries() -> None:
    script = Script([TextChunk("partial"), RetryableError("network: cut")])
    cuts: list[int] = []
    with pytest.raises(RetryableError, match="cut"):
        collect(script, max_tries=4, on_cut=lambda e, n, d: cuts.append(n))
    assert script.opened == 4 and cuts == [1, 2, 3]


def test_fatal_errors_raise_at_once() -> None:
    for error in (AuthError("bad key", status=401), InvalidRequest("bad request", status=400)):
        script = Script([error], reply("never"))
        with pytest.raises(type(error)):
            collect(script)
        assert script.opened == 1


def test_gives_up_after_max_tries_with_the_last_error() -> None:
    script = Script([RetryableError("server error", status=503)])
    with pytest.raises(RetryableError, match="server error"):
        collect(script)
    assert script.opened == 10


def test_backoff_sequence_over_ten_tries() -> None:
    script = Script([RetryableError("down")])
    sleeps = Sleeps()
    with pytest.raises(RetryableError):
        collect(script, sleep=sleeps)
    assert sleeps.delays == [1, 2, 4, 8, 16, 32, 60, 60, 60]


def test_a_local_server_that_is_down_gets_two_short_retries() -> None:
    script = Script([LocalServerDown("nothing answers at http://127.0.0.1:8080/v1")])
    sleeps = Sleeps()
    with pytest.raises(LocalServerDown, match="nothing answers"):
        collect(script, sleep=sleeps)
    assert script.opened == 3
    assert sleeps.delays == [0.5, 1.0]


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8080/v1", "http://127.5.0.1", "http://[::1]:11434", "http://localhost:1234",
     "http://10.0.0.7:8000", "http://172.20.1.1", "http://192.168.1.20:8080/v1",
     "http://gpu-box.local:8080", "http://LOCALHOST."],
)
def test_local_and_private_addresses_are_local(url: str) -> None:
    assert is_local_url(url)


@pytest.mark.parametrize(
    "url", ["https://api.openai.com/v1", "http://8.8.8.8", "http://172.32.0.1", "not a url",
            "http://example.localdomain", ""],
)
def test_public_addresses_are_not_local(url: str) -> None:
    assert not is_local_url(url)


def _connect_refused(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("[Errno 111] Connection refused", request=request)


async def _first_error(url: str) -> ProviderError:
    """The error of a request to `url` when every connection is refused."""
    provider = OpenAIChatProvider("p", url, transport=httpx.MockTransport(_connect_refused))
    try:
        async for _ in provider.stream(ModelRequest(model="m", system="", messages=[])):
            pass
    except ProviderError as exc:
        return exc
    finally:
        await provider.aclose()
    raise AssertionError("no error")


def test_a_refused_connection_is_local_only_at_a_local_address() -> None:
    """A remote host that refuses keeps the full policy: only a local one fails fast."""
    local = asyncio.run(_first_error("http://127.0.0.1:8080/v1"))
    assert isinstance(local, LocalServerDown)
    assert local.message.startswith("nothing answers at http://127.0.0.1:8080/v1 — start")
    remote = asyncio.run(_first_error("https://api.example.com/v1"))
    assert isinstance(remote, RetryableError) and not isinstance(remote, LocalServerDown)
    assert "cannot connect to https://api.example.com/v1" in remote.message


def test_leaked_httpx_transport_errors_are_retried_as_network_errors() -> None:
    script = Script([httpx.ReadError("connection reset")], reply("ok"))
    events, _, retries = collect(script)
    assert TextChunk("ok") in events
    assert isinstance(retries[0][0], RetryableError)
    assert retries[0][0].message.startswith("network:")


def test_leaked_httpx_error_after_output_becomes_a_retryable_error() -> None:
    script = Script([TextChunk("x"), httpx.RemoteProtocolError("peer closed")])
    with pytest.raises(RetryableError, match="network"):
        collect(script)


def test_other_exceptions_are_not_swallowed() -> None:
    script = Script([ValueError("a bug")], reply("never"))
    with pytest.raises(ValueError):
        collect(script)
    assert script.opened == 1


def test_a_retry_after_beyond_the_limit_is_not_waited_for() -> None:
    script = Script([RateLimited("daily quota", retry_after=3600.0)], reply("never"))
    with pytest.raises(RateLimited, match="3600 s"):
        collect(script)
    assert script.opened == 1


def test_abort_during_the_wait_raises_aborted_promptly() -> None:
    abort = AbortSignal()
    script = Script([RetryableError("down")], reply("never"))
    waits: list[float] = []

    async def forever(delay: float) -> None:
        waits.append(delay)
        abort.abort("stop")  # fired while the policy is waiting
        await asyncio.Event().wait()

    with pytest.raises(Aborted):
        collect(script, abort=abort, sleep=forever)
    assert waits == [1.0] and script.opened == 1


def test_abort_from_another_task_ends_a_long_real_wait() -> None:
    async def main() -> None:
        abort = AbortSignal()
        script = Script([RetryableError("down")], reply("never"))
        stream = stream_with_retry(script.open, abort=abort, base=3600.0, cap=3600.0)

        async def consume() -> None:
            async for _ in stream:
                pass

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.05)
        abort.abort()
        with pytest.raises(Aborted):
            await asyncio.wait_for(task, 5)

    asyncio.run(main())


def test_already_aborted_opens_nothing() -> None:
    abort = AbortSignal()
    abort.abort()
    script = Script(reply("never"))
    with pytest.raises(Aborted):
        collect(script, abort=abort)
    assert script.opened == 0


def test_stopping_early_closes_the_provider_stream() -> None:
    script = Script(reply("a b c", chunk=1))

    async def main() -> None:
        stream = stream_with_retry(script.open, abort=AbortSignal())
        async for _ in stream:
            break
        await stream.aclose()  # type: ignore[attr-defined]

    asyncio.run(main())
    assert script.closed == 1


def test_errors_carry_the_provider_message() -> None:
    error: ProviderError = RateLimited("Rate limit reached for gpt-x", status=429)
    script = Script([error])
    with pytest.raises(RateLimited) as raised:
        collect(script, max_tries=2)
    assert raised.value.message == "Rate limit reached for gpt-x"
