"""What a run may get beyond the loop for one kind of model: one protocol, called at fixed
points, with no branch on the model in the loop.

The loop (run/loop.py) calls a run's `RunAssist` at four points:

    before_first_step   after the user's message is stored, before the first request
    hold                before each request: what the next step may be (see `StepHold`)
    refusal             before each call of the model's runs: a reason to refuse it, or None
    after_calls         after a step's calls ran
    after_answer        after an answer without calls: accept it (None), or say the run goes
                        on (`GO_ON`, after the assist told the model something), or end it
                        with a reason of its own

A hosted model's run gets `NoAssist`, which does nothing. The help for small local models
lives in its own package, which the session attaches; neither run/ nor tools/ import it.
The assist acts only through the run's own means: calls made with `make_calls` are shown,
checked and asked like the model's own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from totem.messages import Message, ToolPart

if TYPE_CHECKING:
    from totem.events import Event
    from totem.providers.base import ToolSpec
    from totem.providers.localserver.sampling import Sampling
    from totem.run.compaction import Compactor
    from totem.tools.base import Tool
    from totem.tools.read_first import ReadFirst

__all__ = [
    "GO_ON", "AheadCall", "AssistFactory", "AssistedRun", "NoAssist", "RunAssist", "StepHold",
]

GO_ON = "go on"  # after_answer: the assist told the model something; the loop continues


@dataclass(frozen=True, slots=True)
class AheadCall:
    """A call the run makes for the model (shown and asked like the model's own)."""

    name: str
    args: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class StepHold:
    """What the next step may be: `answer` False, it must be a call; `answer_now` (a name of
    a step text, see providers/localserver/stepmode.py) it must be the answer; `withheld`
    tools are not offered for it; `not_now` tools are offered but may not be called in it;
    `temperature` the step's sampling, when not the model's."""

    answer: bool = True
    answer_now: str = ""
    # with `answer_now`: the separate things the reply must cover, in the model's own words
    # (its plan's parts), listed after the step's text: asked to list the files and say
    # what the project does, the 1.5B's reply after it read again said only what it does
    covers: tuple[str, ...] = ()
    withheld: frozenset[str] = frozenset()
    # tools still described but not to be called in this step: in constrained steps only the
    # step's schema leaves them out, so the prompt (and the server's cache of it) is the same
    not_now: frozenset[str] = frozenset()
    # the step's sampling temperature, where the assist wants it other than the model's
    # (None: the model's own)
    temperature: float | None = None


FREE = StepHold()


class Runner(Protocol):
    """What an assist may use of the run's tool runner."""

    @property
    def read_first(self) -> ReadFirst: ...

    # how many times the run made this call with this result (the repeat guard's count)
    def times_seen(self, part: ToolPart) -> int: ...


class AssistedRun(Protocol):
    """What an assist may use of the run it helps."""

    nested: bool
    tools: dict[str, Tool]
    specs: list[ToolSpec]
    history: list[Message]
    first: int  # where this run's messages start in `history`
    compactor: Compactor

    @property
    def runner(self) -> Runner: ...

    @property
    def root(self) -> Path: ...

    @property
    def system(self) -> str: ...

    @property
    def sampling(self) -> Sampling: ...

    def emit(self, event: Event) -> None: ...

    def request_text(self) -> str: ...

    def synthetic_user(self, text: str) -> None: ...

    # take a step back: the message stays stored and shown with `note`, and is never sent
    # to the model again, so that the next step is sampled from the prompt before it
    def retract(self, message: Message, note: str) -> None: ...

    async def make_calls(self, calls: Sequence[AheadCall]) -> list[ToolPart]: ...

    async def ask_schema(self, system: str, text: str, schema: dict[str, Any]) -> str: ...


class RunAssist(Protocol):
    async def before_first_step(self) -> None: ...

    def hold(self) -> StepHold: ...

    def refusal(self, name: str, args: Mapping[str, Any]) -> str | None: ...

    async def after_calls(self, parts: Sequence[ToolPart]) -> None: ...

    async def after_answer(self, message: Message) -> tuple[str, str] | None: ...


# Made once per run, from the run it helps.
AssistFactory = Callable[[AssistedRun], RunAssist]


class NoAssist:
    """A run that gets nothing beyond the loop (every model but a small local one)."""

    async def before_first_step(self) -> None:
        return None

    def hold(self) -> StepHold:
        return FREE

    def refusal(self, name: str, args: Mapping[str, Any]) -> str | None:
        return None

    async def after_calls(self, parts: Sequence[ToolPart]) -> None:
        return None

    async def after_answer(self, message: Message) -> tuple[str, str] | None:
        return None
