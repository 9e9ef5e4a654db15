"""bench/exercism: the exercises load, the prompts are Aider's, the harness judges with the
pristine tests (an agent that edits them still fails), the failure goes back once; totem and
Aider as real processes on a scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.exercism.agents import Agent, Attempt, Job, NoAgent, ReferenceAgent  # noqa: E402
from bench.exercism.aider_agent import AiderAgent  # noqa: E402
from bench.exercism.checks import failure_message  # noqa: E402
from bench.exercism.exercise import Exercise, ExerciseError, load_exercises  # noqa: E402
from bench.exercism.harness import run_exercise  # noqa: E402
from bench.exercism.report import table  # noqa: E402
from bench.exercism.run import arguments, run  # noqa: E402
from bench.exercism.totem_agent import TotemAgent  # noqa: E402
from totem.testing.fake_server import running_in_thread  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EXERCISES = REPO / "bench" / "exercism" / "exercises"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
AIDER_PYTHON = CACHE / "totem-dev" / "aider-venv" / "bin" / "python"


def _one(name: str) -> Exercise:
    [exercise] = load_exercises(EXERCISES, [name])
    return exercise


def _run(exercise: Exercise, agent: Agent, tmp_path: Path, *, tries: int = 2) -> dict[str, Any]:
    result = run_exercise(exercise, agent, model="m", scratch=tmp_path / "scratch",
                          transcripts=tmp_path / "t" / exercise.name, timeout=120, tries=tries)
    return result.to_dict()


def _solution(name: str) -> str:
    exercise = _one(name)
    return (exercise.source / exercise.examples[0]).read_text()


def test_the_dev_exercises_load_and_the_prompt_is_aiders() -> None:
    exercises = load_exercises(EXERCISES)
    assert len(exercises) == 25
    binary = _one("binary")
    prompt = binary.instructions()
    docs = binary.source / ".docs"
    assert prompt.startswith((docs / "instructions.md").read_text())
    assert (docs / "instructions.append.md").read_text() in prompt
    assert prompt.endswith(
        "\n####\n\nUse the above instructions to modify the supplied files: binary.py\n"
        "Don't change the names of existing functions or classes, as they may be referenced "
        "from other code like unit tests, etc.\n"
        "Only use standard libraries, don't suggest installing any packages.\n")
    # Aider's harness puts an introduction first where there is one
    assert _one("anagram").instructions().startswith(
        (EXERCISES / "anagram/.docs/introduction.md").read_text())
    for exercise in exercises:
        assert _solution(exercise.name) not in exercise.instructions()


def test_the_working_copy_has_no_meta_or_docs(tmp_path: Path) -> None:
    _one("acronym").materialise(tmp_path / "acronym")
    assert sorted(p.name for p in (tmp_path / "acronym").iterdir()) == [
        "acronym.py", "acronym_test.py"]


def test_a_folder_not_laid_out_as_exercism_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "broken/.meta").mkdir(parents=True)
    (tmp_path / "broken/.meta/config.json").write_text('{"files": {"solution": ["x.py"]}}')
    with pytest.raises(ExerciseError, match="no solution or test file"):
        load_exercises(tmp_path)
    with pytest.raises(ExerciseError, match="no exercise nope"):
        load_exercises(EXERCISES, ["nope"])


def test_reference_passes_at_once_and_the_untouched_stub_fails(tmp_path: Path) -> None:
    for name in ("acronym", "pov", "simple-cipher"):
        exercise = _one(name)
        good = _run(exercise, ReferenceAgent(), tmp_path)
        assert good["pass1"] and good["pass2"] and len(good["tries"]) == 1
        bad = _run(exercise, NoAgent(), tmp_path)
        assert not bad["pass1"] and not bad["pass2"] and len(bad["tries"]) == 2


def test_markdown_is_a_refactoring_exercise_whose_stub_already_passes(tmp_path: Path) -> None:
    assert _run(_one("markdown"), NoAgent(), tmp_path, tries=1)["pass1"]


class _EditsTheTests:
    """An "agent" that makes the tests pass by rewriting them, and adds a pytest config and a
    conftest.py that would hide the failures."""

    name = "cheat"

    def attempt(self, job: Job, message: str, *, try_no: int) -> Attempt:
        for test in job.exercise.tests:
            (job.work / test).write_text("def test_nothing():\n    pass\n")
        (job.work / "pytest.ini").write_text("[pytest]\naddopts = --collect-only\n")
        (job.work / "conftest.py").write_text("collect_ignore_glob = ['*_test.py']\n")
        return Attempt(exit_code=0, wall_s=0.0)


def test_an_agent_that_edits_the_test_file_still_fails(tmp_path: Path) -> None:
    row = _run(_one("acronym"), _EditsTheTests(), tmp_path)
    assert not row["pass1"] and not row["pass2"]
    assert [t["tests_edited"] for t in row["tries"]] == [["acronym_test.py"]] * 2
    restored = (tmp_path / "scratch/cheat/acronym/acronym_test.py").read_text()
    assert restored == (EXERCISES / "acronym/acronym_test.py").read_text()


class _FixesOnTheSecondTry:
    name = "second"

    def __init__(self) -> None:
        self.messages: list[str] = []

    def attempt(self, job: Job, message: str, *, try_no: int) -> Attempt:
        self.messages.append(message)
        if try_no == 2:
            ReferenceAgent().attempt(job, message, try_no=try_no)
        return Attempt(exit_code=0, wall_s=1.5, tokens_in=10, tokens_out=2)


def test_the_failure_goes_back_once_and_the_second_try_counts_for_pass2(tmp_path: Path) -> None:
    agent = _FixesOnTheSecondTry()
    row = _run(_one("acronym"), agent, tmp_path)
    assert not row["pass1"] and row["pass2"]
    assert row["wall_s"] == 3.0 and (row["tokens_in"], row["tokens_out"]) == (20, 4)
    first, second = agent.messages
    assert first == _one("acronym").instructions()
    assert "AssertionError: None != 'PNG'" in second
    assert str(tmp_path) not in second and " in 0." not in second  # Aider's cleanup
    assert "dev/null" not in second
    assert second.endswith("\n####\n\nSee the testing errors above.\nThe tests are correct, "
                           "don't try and change them.\nFix the code in acronym.py to resolve "
                           "the errors.\n")
    assert "| acronym | second | fail | PASS | 3 | 20/4 |" in table([row])


def test_a_long_test_output_is_cut_to_its_head_and_tail() -> None:
    output = "".join(f"line {i}\n" for i in range(20000))
    message = failure_message(output, _one("acronym"), limit=6000)
    assert message.startswith("line 0\n") and "line 19999" in message
    assert "characters cut ...]" in message and len(message) < 6400


def test_the_command_line_runs_the_self_test_without_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.json"
    rows = run(arguments(["--agent", "reference", "--agent", "none", "--only", "binary",
                          "--only", "triangle", "--out", str(out),
                          "--scratch", str(tmp_path / "s")]))
    assert [(r["exercise"], r["agent"], r["pass1"]) for r in rows] == [
        ("binary", "reference", True), ("binary", "none", False),
        ("triangle", "reference", True), ("triangle", "none", False)]
    saved = json.loads(out.read_text())
    assert saved["meta"]["agents"] == ["reference", "none"] and len(saved["results"]) == 4
    printed = capsys.readouterr().out
    assert "[-] binary none: pass@1 fail pass@2 fail" in printed
    assert (tmp_path / "transcripts/-/triangle/none.try2.tests.txt").is_file()


def test_totem_continues_its_session_on_the_second_try(tmp_path: Path) -> None:
    turns: list[dict[str, Any]] = [
        {"text": "I am not sure what to write."},
        {"tool": "read", "args": {"path": "acronym.py"}},  # totem writes only what it read
        {"tool": "write", "args": {"path": "acronym.py", "content": _solution("acronym")}},
        {"text": "Fixed acronym.py."},
    ]
    with running_in_thread(turns, models=["local"]) as url:
        agent = TotemAgent(totem_src=REPO, base_url=url, model_id="local")
        result = run_exercise(_one("acronym"), agent, model="m", scratch=tmp_path / "s",
                              transcripts=tmp_path / "t", timeout=120)
        requests = json.loads(_get(url + "/_requests"))
    assert [t.passed for t in result.tries] == [False, True]
    assert result.tries[1].tools == ["read", "write"]
    assert all(t.exit_code == 0 and (t.tokens_in or 0) > 0 for t in result.tries)
    chats = [r["body"]["messages"] for r in requests if r["path"].endswith("chat/completions")]
    # one session: the second try's first request holds the instructions and the failures
    second_try = json.dumps(chats[1])
    assert "Use the above instructions" in second_try
    assert "See the testing errors above." in second_try
    assert (tmp_path / "t/totem.messages.json").is_file()


def test_totem_options_reach_its_provider(tmp_path: Path) -> None:
    # a help switched off for a measurement is read by totem: a wrong one is its clear error
    with running_in_thread([{"text": "unused"}], models=["local"]) as url:
        agent = TotemAgent(totem_src=REPO, base_url=url, model_id="local",
                           options={"assist": {"no_such_help": False}})
        result = run_exercise(_one("acronym"), agent, model="m", scratch=tmp_path / "s",
                              transcripts=tmp_path / "t", timeout=60, tries=1)
    assert result.tries[0].exit_code not in (0, None)
    said = (tmp_path / "t/totem.try1.stderr").read_text()
    assert "`assist` has no no_such_help" in said


def test_totem_is_killed_at_the_limit(tmp_path: Path) -> None:
    with running_in_thread([{"error": "hang"}], models=["local"]) as url:
        agent = TotemAgent(totem_src=REPO, base_url=url, model_id="local")
        result = run_exercise(_one("acronym"), agent, model="m", scratch=tmp_path / "s",
                              transcripts=tmp_path / "t", timeout=6, tries=1)
    assert result.tries[0].timed_out and not result.pass2


def _aider_python() -> Path:
    if AIDER_PYTHON.is_file():
        return AIDER_PYTHON
    if os.environ.get("TOTEM_REQUIRE_AIDER") == "1":
        pytest.fail(f"TOTEM_REQUIRE_AIDER=1 but {AIDER_PYTHON} is missing (scripts/aider.sh)")
    pytest.skip(f"Aider is not installed ({AIDER_PYTHON}); run scripts/aider.sh")


def test_aider_gets_the_failure_in_the_same_chat(tmp_path: Path) -> None:
    python = _aider_python()
    wrong = "def abbreviate(words):\n    return words\n"
    turns = [{"text": f"acronym.py\n```python\n{wrong}```\n"},
             {"text": f"acronym.py\n```python\n{_solution('acronym')}```\n"}]
    with running_in_thread(turns, models=["local"]) as url:
        agent = AiderAgent(python=python, base_url=url, model_id="local")
        result = run_exercise(_one("acronym"), agent, model="m", scratch=tmp_path / "s",
                              transcripts=tmp_path / "t", timeout=120)
        requests = json.loads(_get(url + "/_requests"))
    logs = {p.name: p.read_text()[-1500:] for p in (tmp_path / "t").glob("aider.try*.log")}
    assert [t.passed for t in result.tries] == [False, True], logs
    assert all(t.exit_code == 0 and (t.tokens_in or 0) > 0 for t in result.tries), logs
    chats = [r["body"]["messages"] for r in requests if r["path"].endswith("chat/completions")
             and not r["body"]["messages"][0]["content"].startswith("*Briefly* summarize")]
    assert len(chats) == 2  # besides the summary of the history Aider may start at the end
    second = json.dumps(chats[1])
    # the second request holds the first exchange, then the test output and Aider's words
    assert "Use the above instructions" in second and "return words" in second
    assert "See the testing errors above." in second
    assert (tmp_path / "t/aider.chat.history.md").is_file()


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return str(reply.read().decode())
