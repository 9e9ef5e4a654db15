"""Counting and honesty, as a user sees them in `totem run --format json` on the fake server:
a sub-agent's tokens in the totals, a model that is not there never sent to the server, the
README's examples that run."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.support.headless import Project, json_lines

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_a_sub_agents_tokens_are_in_the_run_and_thread_totals(project: Project) -> None:
    turns = [{"tool": "task", "args": {"agent": "general", "prompt": "count the files"}},
             {"text": "There are no files."}, {"text": "The agent says: no files."}]
    with project.serve(turns):
        done = project.totem("run", "--format", "json", "delegate it")
    assert done.returncode == 0, done.stderr
    seen = json_lines(done.stdout)
    steps = [e for e in seen if e["type"] == "step_finished"]
    child = next(e for e in seen if e["type"] == "agent" and e["event"]["type"] == "run_finished")
    assert child["event"]["usage"]["input"] == 10
    end = seen[-2]
    assert end["type"] == "run_finished"
    assert end["usage"]["input"] == sum(s["usage"]["input"] for s in steps) + 10 == 30
    assert seen[-1]["usage"]["input"] == 30


def test_a_sub_agent_model_that_no_provider_has_falls_back_with_a_note(
    project: Project,
) -> None:
    created = project.totem("agents", "create", "fancy", "--description", "a fancy one",
                            "--prompt", "You are FANCY.", "--model", "nowhere/big")
    assert created.returncode == 0, created.stderr
    turns = [{"tool": "task", "args": {"agent": "fancy", "prompt": "x"}},
             {"text": "fancy answer"}, {"text": "done"}]
    with project.serve(turns):
        done = project.totem("run", "--format", "json", "go")
    assert done.returncode == 0, done.stderr
    models = [c["model"] for c in project.chats()]
    assert models == ["m", "m", "m"]  # "nowhere/big" was never sent to the server
    end = next(e for e in json_lines(done.stdout) if e["type"] == "tool_end")
    assert "The model nowhere/big is not available" in end["output"]
    assert "using the conversation's model fake/m" in end["output"]


def test_the_readmes_agents_create_example_works(project: Project) -> None:
    line = next(x for x in README.read_text().splitlines() if x.startswith("totem agents create"))
    words = shlex.split(re.sub(r"\s+#.*$", "", line))
    done = project.totem(*words[1:])
    assert done.returncode == 0, done.stderr
    listed = project.totem("agents")
    assert "reviewer" in listed.stdout


def test_think_tags_are_split_for_a_model_of_any_name(project: Project) -> None:
    turns = [{"text": "<think>The user wants a greeting.</think>\nHello there."},
             {"text": "Plain <think> in the middle stays text."}]
    with project.serve(turns):
        first = project.totem("run", "--format", "json", "greet me")
        second = project.totem("run", "--format", "json", "--continue", "again")
    seen = json_lines(first.stdout)
    assert "".join(e["text"] for e in seen if e["type"] == "reasoning") == \
        "The user wants a greeting."
    assert "".join(e["text"] for e in seen if e["type"] == "text") == "Hello there."
    assert seen[-1]["answer"] == "Hello there."
    later = json_lines(second.stdout)
    assert "".join(e["text"] for e in later if e["type"] == "text") == \
        "Plain <think> in the middle stays text."
    assert not [e for e in later if e["type"] == "reasoning"]


def test_an_answer_still_cut_after_three_continuations_ends_with_a_notice(
    project: Project,
) -> None:
    with project.serve([{"text": "part ", "finish": "length"}] * 4):
        done = project.totem("run", "--format", "json", "write a lot")
    assert done.returncode == 3, done.stderr
    seen = json_lines(done.stdout)
    assert len(project.chats()) == 4
    assert any(e["type"] == "notice" and "still cut" in e["text"] for e in seen)
    assert seen[-1]["finish_reason"] == "truncated"


def test_an_image_read_is_shown_once_as_image(project: Project) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40
    (project.root / "dot.png").write_bytes(png)
    with project.serve([{"tool": "read", "args": {"path": "dot.png"}}, {"text": "A dot."}]):
        config = project.tmp / "totem.yaml"
        config.write_text(config.read_text().replace("model: fake/m", "model: fake/gpt-4o"))
        done = project.totem("run", "--format", "json", "look at dot.png")  # takes images
    end = next(e for e in json_lines(done.stdout) if e["type"] == "tool_end")
    assert end["output"] == "dot.png: an image (image/png, 48 bytes), attached. [image]"


def test_a_failed_command_is_an_error_and_broken_json_is_worded_once(project: Project) -> None:
    turns = [{"calls": [{"tool": "bash", "args": {"command": "echo fine"}},
                        {"tool": "bash", "args": {"command": "echo broke; exit 3"}},
                        {"tool": "read", "args": '{"path": "unterminated'}]},
             {"text": "One failed."}]
    with project.serve(turns):
        done = project.totem("run", "--yes", "--format", "json", "run both")
    ends = [e for e in json_lines(done.stdout) if e["type"] == "tool_end"]
    assert [e["is_error"] for e in ends] == [False, True, True]
    assert ends[1]["output"] == "broke\n\nExit code: 3"
    assert "Unterminated string starting at position" in ends[2]["output"]
    assert "at at" not in ends[2]["output"]
