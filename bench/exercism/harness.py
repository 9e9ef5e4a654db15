"""One exercise, one agent, run as Aider's benchmark runs it: a fresh copy, the instructions,
the tests (restored first) after the agent stops, on a failure the output back once, the
tests again."""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.exercism.agents import Agent, Attempt, Job
from bench.exercism.checks import TEST_TIMEOUT, failure_message, run_tests
from bench.exercism.exercise import Exercise

TRIES = 2  # Aider's default --tries


@dataclass(slots=True)
class TryRecord:
    """One try: what the agent did, whether it touched the test file, what the tests said."""

    try_no: int
    exit_code: int | None
    timed_out: bool
    wall_s: float
    tokens_in: int | None
    tokens_out: int | None
    detail: str
    tools: list[str]
    tests_edited: list[str]  # test files the agent changed (restored before the check)
    passed: bool
    tests_timed_out: bool


@dataclass(slots=True)
class ExerciseResult:
    """An exercise's outcome for one agent; pass@1 / pass@2 as Aider counts them."""

    exercise: str
    agent: str
    model: str
    tries: list[TryRecord] = field(default_factory=list)
    server_crashed: bool = False

    @property
    def pass1(self) -> bool:
        return bool(self.tries) and self.tries[0].passed

    @property
    def pass2(self) -> bool:
        return any(t.passed for t in self.tries[:2])

    @property
    def wall_s(self) -> float:
        return round(sum(t.wall_s for t in self.tries), 1)

    def tokens(self, side: str) -> int | None:
        """Total `in` or `out` tokens over the tries; None when a try's count is unknown."""
        counts = [t.tokens_in if side == "in" else t.tokens_out for t in self.tries]
        return None if any(c is None for c in counts) else sum(c or 0 for c in counts)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "pass1": self.pass1, "pass2": self.pass2,
                "wall_s": self.wall_s, "tokens_in": self.tokens("in"),
                "tokens_out": self.tokens("out")}


def run_exercise(
    exercise: Exercise, agent: Agent, *, model: str, scratch: Path, transcripts: Path,
    timeout: float, tries: int = TRIES, test_timeout: float = TEST_TIMEOUT,
) -> ExerciseResult:
    """Runs `exercise` with `agent` in `scratch/AGENT/NAME`; logs go to `transcripts`."""
    work = scratch / agent.name / exercise.name
    home = scratch / agent.name / "_home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    exercise.materialise(work)
    transcripts.mkdir(parents=True, exist_ok=True)
    job = Job(exercise=exercise, work=work, home=home, transcripts=transcripts, timeout=timeout,
              tries=tries)
    result = ExerciseResult(exercise=exercise.name, agent=agent.name, model=model)
    message = exercise.instructions()
    for try_no in range(1, tries + 1):
        prefix = f"{agent.name}.try{try_no}"
        (transcripts / f"{prefix}.message.txt").write_text(message, encoding="utf-8")
        attempt = agent.attempt(job, message, try_no=try_no)
        edited = exercise.tests_changed(work)
        check = run_tests(exercise, work, log=transcripts / f"{prefix}.tests.txt",
                          timeout=test_timeout)
        for stub in exercise.solution:  # what the agent left, for reading afterwards
            if (work / stub).is_file():
                shutil.copyfile(work / stub, transcripts / f"{prefix}.{Path(stub).name}")
        result.tries.append(_record(try_no, attempt, edited, check.passed, check.timed_out))
        if check.passed:
            break
        message = failure_message(check.output, exercise)
    return result


def _record(try_no: int, attempt: Attempt, edited: list[str], passed: bool,
            tests_timed_out: bool) -> TryRecord:
    return TryRecord(try_no=try_no, exit_code=attempt.exit_code, timed_out=attempt.timed_out,
                     wall_s=round(attempt.wall_s, 1), tokens_in=attempt.tokens_in,
                     tokens_out=attempt.tokens_out, detail=attempt.detail,
                     tools=attempt.tools, tests_edited=edited, passed=passed,
                     tests_timed_out=tests_timed_out)
