"""Runs take turns on the event loop: its sockets are polled between any two steps, so a
request to the server never waits behind a step of every run at once."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from tests.support.loop_agents import make_agent
from totem.abort import AbortSignal
from totem.providers.base import ModelRequest
from totem.run.loop import run_events
from totem.run.pacing import take_turn
from totem.testing.scripted import FunctionProvider, Turn, call, reply

STEPS = 4


def _polls(record: list[str]) -> Callable[[], None]:
    """Record "poll" at every pass of the loop that polls its sockets: a socket with data
    nobody reads is ready at every poll. Returns what stops it."""
    ours, theirs = socket.socketpair()
    theirs.send(b"x")
    loop = asyncio.get_running_loop()
    loop.add_reader(ours.fileno(), record.append, "poll")

    def stop() -> None:
        loop.remove_reader(ours.fileno())
        ours.close()
        theirs.close()

    return stop


def _provider(name: str, record: list[str]) -> FunctionProvider:
    """Echo calls that never wait on anything (the fastest model there is), then an answer;
    each step recorded as it starts."""

    def turn(request: ModelRequest, index: int) -> Turn:
        record.append(name)
        if index < STEPS:
            return call(("echo", {"text": f"{name}{index}"}))
        return reply(f"{name} done")

    return FunctionProvider(turn)


async def _run(tmp: Path, name: str, record: list[str]) -> str:
    agent = make_agent(tmp / name, _provider(name, record))
    session = agent.store.create_session(project=str(agent.root), model="m")
    last = ""
    events: AsyncIterator[object] = run_events(agent, session.id, "go", abort=AbortSignal())
    async for event in events:
        last = getattr(event, "reason", last)
    return last


def test_the_loop_polls_its_sockets_between_any_two_steps_of_runs(tmp_path: Path) -> None:
    record: list[str] = []
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()

    async def main() -> list[str]:
        stop = _polls(record)
        try:
            return await asyncio.gather(*(_run(tmp_path, n, record) for n in ("a", "b", "c")))
        finally:
            stop()

    assert asyncio.run(main()) == ["finished"] * 3
    steps = [i for i, what in enumerate(record) if what != "poll"]
    assert len(steps) == 3 * (STEPS + 1)
    for before, after in zip(steps, steps[1:], strict=False):
        assert "poll" in record[before:after], record[before:after + 1]
    # and the runs took turns rather than one of them going first to its end
    order = [record[i] for i in steps]
    assert order[:6] == ["a", "b", "c", "a", "b", "c"]


def test_a_run_cancelled_while_it_waits_for_its_turn_holds_up_no_other() -> None:
    async def main() -> list[str]:
        went: list[str] = []

        async def step(name: str) -> None:
            await take_turn()
            went.append(name)

        first, second, third = (asyncio.create_task(step(n)) for n in ("1", "2", "3"))
        await asyncio.sleep(0)  # all three wait now
        second.cancel()
        await asyncio.gather(first, third)
        assert second.cancelled()
        await take_turn()  # and the turns go on afterwards
        went.append("4")
        return went

    assert asyncio.run(main()) == ["1", "3", "4"]
