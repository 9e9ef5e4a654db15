"""The exercise's tests, run as Aider's run_unit_tests runs them, and the failure message."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.exercism.exercise import TEST_FAILURES, Exercise
from bench.exercism.processes import run_in_group

TEST_TIMEOUT = 180.0  # Aider's: 60 * 3
FEEDBACK_CHARS = 6000  # the most of the test output sent back (Aider sends it all)


@dataclass(frozen=True, slots=True)
class TestRun:
    """One run of the exercise's tests."""

    passed: bool
    timed_out: bool
    output: str  # as Aider sends it: timings removed, the folder's path replaced by its name


def cleanup_test_output(output: str, work: Path) -> str:
    """Aider's cleanup_test_output: no timings (they would vary the prompt), no full path."""
    return re.sub(r"\bin \d+\.\d+s\b", "", output).replace(str(work), work.name)


def run_tests(exercise: Exercise, work: Path, *, log: Path,
              timeout: float = TEST_TIMEOUT) -> TestRun:
    """Restores the pristine test files, then runs pytest in `work` (its output in `log`)."""
    exercise.restore_tests(work)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work),
           "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8",
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    # The exercise's own test files only; a conftest.py or pytest config the agent wrote is
    # not read, and the folder does not shadow modules (-P).
    command = [sys.executable, "-P", "-m", "pytest", "-p", "no:cacheprovider", "--noconftest",
               "-c", os.devnull, "--rootdir", str(work), *exercise.tests]
    code, _ = run_in_group(command, cwd=work, env=env, stdout=log, stderr=None, timeout=timeout)
    output = log.read_text(encoding="utf-8", errors="replace")
    # the empty config given with -c is the harness's, not news for the model
    output = re.sub(r"^configfile: \S*dev/null\n", "", output, flags=re.MULTILINE)
    output = cleanup_test_output(output, work)
    if code is None:
        return TestRun(passed=False, timed_out=True, output="Tests timed out!")
    return TestRun(passed=code == 0, timed_out=False, output=output)


def failure_message(output: str, exercise: Exercise, *, limit: int = FEEDBACK_CHARS) -> str:
    """The second try's message: the test output (its head and tail when longer than `limit`),
    then Aider's test_failures text."""
    if len(output) > limit:
        head, tail = output[: limit * 2 // 3], output[-(limit // 3):]
        output = f"{head}\n[... {len(output) - len(head) - len(tail)} characters cut ...]\n{tail}"
    errors = "\n".join(output.splitlines())
    return errors + TEST_FAILURES.format(file_list=exercise.file_list)
