"""What the harness asks of an agent, and the two agents that need no model: `reference`
(the exercise's example solution over the stub: must pass everything at once) and `none`
(the stub left as it is: must fail everything)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from bench.exercism.exercise import Exercise


@dataclass(frozen=True, slots=True)
class Job:
    """One exercise for one agent: its working copy, a fresh HOME, where its logs go."""

    exercise: Exercise
    work: Path  # the exercise's files without .meta and .docs; the agent's current folder
    home: Path  # empty at the first try, kept for the second (the agent's own state)
    transcripts: Path
    timeout: float  # seconds per try; the agent's process group is killed then
    tries: int  # how many tries at most (the last one leaves no state for a next)


@dataclass(slots=True)
class Attempt:
    """What one try of an agent gave (before the tests are run)."""

    exit_code: int | None  # None: killed at the timeout
    wall_s: float
    tokens_in: int | None = None  # None: not known
    tokens_out: int | None = None
    detail: str = ""  # the agent's own word on how it ended (totem's finish reason)
    tools: list[str] = field(default_factory=list)

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


class Agent(Protocol):
    """An agent under test. `attempt` is called once per try with the try's message (the
    instructions, then the failure message); the second call continues the first's chat."""

    @property
    def name(self) -> str: ...

    def attempt(self, job: Job, message: str, *, try_no: int) -> Attempt: ...


class ReferenceAgent:
    """Copies the exercise's example solution over the stub: the harness's self-test."""

    name = "reference"

    def attempt(self, job: Job, message: str, *, try_no: int) -> Attempt:
        for example, stub in zip(job.exercise.examples, job.exercise.solution, strict=False):
            shutil.copyfile(job.exercise.source / example, job.work / stub)
        return Attempt(exit_code=0, wall_s=0.0, tokens_in=0, tokens_out=0)


class NoAgent:
    """Leaves the stub as it is: every exercise must fail."""

    name = "none"

    def attempt(self, job: Job, message: str, *, try_no: int) -> Attempt:
        return Attempt(exit_code=0, wall_s=0.0, tokens_in=0, tokens_out=0)
