"""The bench's checks judge fairly: a fixture left as it is fails, the reference solution passes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.smallmodel.catalog import Task, load_tasks  # noqa: E402
from bench.smallmodel.checks import mentions_number  # noqa: E402

TASKS = load_tasks()


def test_there_are_enough_tasks() -> None:
    assert len(TASKS) >= 22


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_untouched_fixture_with_empty_answer_fails(task: Task, tmp_path: Path) -> None:
    task.materialise(tmp_path)
    assert task.check(tmp_path, "") is not None


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_reference_solution_passes(task: Task, tmp_path: Path) -> None:
    task.materialise(tmp_path)
    answer = task.solve(tmp_path)
    assert task.check(tmp_path, answer) is None


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_solution_with_a_wrong_answer_text_is_judged_on_files_or_fails(
    task: Task, tmp_path: Path
) -> None:
    # An answer that guesses every small number and names no path passes no question task.
    task.materialise(tmp_path)
    verdict = task.check(tmp_path, "I looked around; it might be 1, 2, 3, 10, 30 or 9102.")
    assert verdict is not None


def test_a_numbered_list_is_no_count(tmp_path: Path) -> None:
    # a 0.5B model's plan, with no tool call, once passed for its fifth step
    [task] = load_tasks(["count_failing_tests"])
    task.materialise(tmp_path)
    plan = "To count them I will:\n1. Find the tests.\n5. Count the failing ones.\n"
    assert task.check(tmp_path, plan) is not None
    assert task.check(tmp_path, "5 failed, 8 passed") is None
    assert mentions_number("Running pytest: 5 failed, 8 passed.", 5, near="fail")
    assert mentions_number("Five tests fail.", 5, words=("five",), near="fail")
    assert not mentions_number("There are 5 tests in the folder.", 5, near="fail")


def test_absence_must_be_said_of_the_thing_asked(tmp_path: Path) -> None:
    [task] = load_tasks(["does_not_exist"])
    task.materialise(tmp_path)
    assert task.check(tmp_path, "Redis is not used here; items are kept in SQLite.") is None
    assert task.check(tmp_path, "I could not run it. The handler uses Redis.") is not None
    assert task.check(tmp_path, "No: connect_redis() in store.py does it.") is not None
