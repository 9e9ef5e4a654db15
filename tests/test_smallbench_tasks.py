"""The bench's checks judge fairly in every wording: a fixture left as it is fails, a guess
fails, the reference solution passes (in the answer form the wording asks for), an answer in
another form fails, and a file the request says to leave alone must be left alone."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.smallmodel.catalog import (  # noqa: E402
    REQUIRED,
    Task,
    from_module,
    load_tasks,
    runs,
)
from bench.smallmodel.checks import mentions_number  # noqa: E402
from bench.smallmodel.forms import AnswerLine, JsonField, OnlyValue  # noqa: E402

TASKS = load_tasks()
CASES = runs(TASKS, ["all"])
FORM_CASES = [(t, w) for t, w in CASES if t.wordings[w].form is not None]
KEEP_CASES = [(t, w) for t, w in CASES if t.wordings[w].keep]
GUESS = "I looked around; it might be 1, 2, 3, 10, 30 or 9102."


def _id(case: tuple[Task, str]) -> str:
    return f"{case[0].name}-{case[1]}"


def test_there_are_enough_tasks_and_wordings() -> None:
    assert len(TASKS) >= 30
    assert all(set(REQUIRED) <= set(t.wordings) for t in TASKS)
    assert sum("other" in t.wordings for t in TASKS) >= 6
    assert len({t.name for t, _ in FORM_CASES}) >= 6  # several questions ask for a form
    assert len({t.name for t, _ in KEEP_CASES}) >= 8  # and several name a file to leave alone


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_the_wordings_differ(task: Task) -> None:
    prompts = [w.prompt for w in task.wordings.values()]
    assert len(set(prompts)) == len(prompts)
    terse = task.wordings["terse"].prompt
    assert terse[0].islower() and len(terse) < len(task.prompt), terse


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_untouched_fixture_with_empty_answer_fails(case: tuple[Task, str], tmp_path: Path) -> None:
    task, wording = case
    task.materialise(tmp_path)
    assert task.judge(tmp_path, "", wording=wording) is not None


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_reference_solution_passes(case: tuple[Task, str], tmp_path: Path) -> None:
    task, wording = case
    task.materialise(tmp_path)
    answer = task.reference(tmp_path, wording=wording)
    assert task.judge(tmp_path, answer, wording=wording) is None


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_a_guess_of_small_numbers_fails(case: tuple[Task, str], tmp_path: Path) -> None:
    # an answer that guesses every small number and names no path passes no question task,
    # in free form or in the form asked
    task, wording = case
    task.materialise(tmp_path)
    assert task.judge(tmp_path, GUESS, wording=wording) is not None
    if (form := task.wordings[wording].form) is not None:
        assert task.judge(tmp_path, form.written("1, 2, 3, 10, 30"), wording=wording) is not None


@pytest.mark.parametrize("case", FORM_CASES, ids=_id)
def test_the_right_value_in_another_form_fails(case: tuple[Task, str], tmp_path: Path) -> None:
    task, wording = case
    form = task.wordings[wording].form
    assert form is not None
    task.materialise(tmp_path)
    free_answer = task.solve(tmp_path)  # right, but not in the form asked
    assert task.judge(tmp_path, free_answer, wording=wording) is not None
    assert task.judge(tmp_path, form.misformed(task.values[0]), wording=wording) is not None
    assert task.judge(tmp_path, form.written(task.values[0]), wording=wording) is None


@pytest.mark.parametrize("case", FORM_CASES, ids=_id)
def test_a_question_in_a_form_still_wants_the_project_untouched(
    case: tuple[Task, str], tmp_path: Path
) -> None:
    task, wording = case
    form = task.wordings[wording].form
    assert form is not None
    task.materialise(tmp_path)
    first = next(iter(task.files))
    (tmp_path / first).write_text("changed\n")
    assert task.judge(tmp_path, form.written(task.values[0]), wording=wording) is not None


@pytest.mark.parametrize("case", KEEP_CASES, ids=_id)
def test_a_file_the_request_says_to_leave_alone_must_be(
    case: tuple[Task, str], tmp_path: Path
) -> None:
    task, wording = case
    for path in task.wordings[wording].keep:
        assert path in task.wordings[wording].prompt  # the request names it
        for harm in ("change", "delete"):
            root = tmp_path / f"{path.replace('/', '_')}-{harm}"
            task.materialise(root)
            answer = task.reference(root, wording=wording)
            if harm == "change":
                (root / path).write_text((root / path).read_text() + "\n# touched\n")
            else:
                (root / path).unlink()
            verdict = task.judge(root, answer, wording=wording)
            assert verdict is not None and path in verdict


def test_a_file_named_as_untouchable_may_change_in_wordings_that_do_not_say_so(
    tmp_path: Path,
) -> None:
    # fix_other_file: the greeting may be fixed in app.py itself, unless the request says not
    [task] = load_tasks(["fix_other_file"])
    task.materialise(tmp_path)
    (tmp_path / "app.py").write_text("print('Hello, world!')\n")
    assert task.judge(tmp_path, "", wording="direct") is None
    assert "leave alone" in (task.judge(tmp_path, "", wording="indirect") or "")


def test_forms_find_the_value_as_small_models_write_it() -> None:
    line = AnswerLine()
    assert line.value("The port is set in config/server.ini.\nANSWER: 8437") == "8437"
    assert line.value("**ANSWER:** `8437`") == "8437"
    assert line.value("ANSWER: src/finance/reconcile/engine.py.") == (
        "src/finance/reconcile/engine.py")
    assert line.value("8437") is None and line.value("answer: 8437") is None
    assert line.value("ANSWER:") is None
    json_field = JsonField("retries")
    assert json_field.value('{"retries": 17}') == "17"
    assert json_field.value('```json\n{"retries": 17}\n```') == "17"
    assert json_field.value("retries: 17") is None and json_field.value('{"count": 17}') is None
    assert json_field.value("[17]") is None
    only = OnlyValue()
    assert only.value("73") == "73" and only.value("`73`.") == "73"
    assert only.value("73\n(DEFAULT_PAGE_SIZE)") is None and only.value("  ") is None


def test_a_task_module_with_a_missing_or_inconsistent_wording_is_refused() -> None:
    def module(**attributes: object) -> types.ModuleType:
        made = types.ModuleType("made_up")
        made.__dict__.update(FILES={"a.txt": "a\n"}, STEPS=1, check=lambda root, answer: None,
                             solve=lambda root: "", **attributes)
        return made

    good = {"direct": "Read a.txt.", "terse": "a.txt?", "indirect": "a.txt is the one."}
    assert set(from_module("ok", module(PROMPTS=good)).wordings) == set(good)
    refused = [
        module(PROMPTS={"direct": "Read a.txt.", "terse": "a.txt?"}),
        module(PROMPTS={**good, "klingon": "a.txt"}),
        module(PROMPTS=good, KEEP={"indirect": ("b.txt",)}),
        module(PROMPTS=good, FORMS={"terse": AnswerLine()}, VALUE="a"),  # does not ask for it
        module(PROMPTS={**good, "terse": "a.txt? ANSWER: <x>"}, FORMS={"terse": AnswerLine()}),
    ]
    for made in refused:
        with pytest.raises(ValueError, match="task made_up"):
            from_module("made_up", made)
    with pytest.raises(ValueError, match="unknown wording"):
        runs(TASKS, ["klingon"])


def test_runs_take_each_wording_a_task_has() -> None:
    some = load_tasks(["delete_file", "ini_edit"])
    assert [(t.name, w) for t, w in runs(some, ["other", "direct"])] == [
        ("delete_file", "other"), ("delete_file", "direct"), ("ini_edit", "direct")]
    assert len(runs(some, ["all"])) == len(some[0].wordings) + len(some[1].wordings)


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
