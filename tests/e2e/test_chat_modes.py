"""The chat's session modes in a real terminal (a pty), against the package's fake OpenAI
server: Shift-Tab cycles the mode (the prompt says which) and keeps what was typed; in plan
mode the model is offered only reading tools; its plan is approved and carried out in the
normal mode, in the same session; `/plan TEXT` plans first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.chat_pty import chat_in_terminal
from tests.support.headless import Project
from totem.cli.chat_modes import CYCLE_MARK, SHIFT_TAB, cycle, prompt_for, split_cycle
from totem.testing.fake_server import FakeOpenAIServer

SHIFT_TAB_KEY = b"\x1b[Z"
PLAN = "Adding a greeting.\n\n1. Create hello.txt\n2. Say it is done"
WRITE = {"tool": "write", "args": {"path": "hello.txt", "content": "hi\n"}}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def chats(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.path.endswith("/chat/completions")]


def offered(body: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in body.get("tools") or []}


def test_shift_tab_cycles_the_modes_and_keeps_the_typed_text(project: Project) -> None:
    with project.serve([{"text": PLAN}]) as server, chat_in_terminal(project) as terminal:
        terminal.send(SHIFT_TAB_KEY)
        terminal.expect("mode: Plan")
        terminal.expect("[plan] › ")
        terminal.send(b"add a greeting" + SHIFT_TAB_KEY)
        terminal.expect("mode: Accept edits")
        terminal.expect("[accept edits] › add a greeting")  # the text is back on the line
        terminal.send(SHIFT_TAB_KEY)
        terminal.expect("mode: Normal")
        terminal.expect("› add a greeting", 3)  # the prompt is back: keys reach readline
        terminal.send(SHIFT_TAB_KEY)
        terminal.expect("mode: Plan", 2)
        terminal.expect("[plan] › add a greeting", 2)
        terminal.send(b"\r")
        terminal.expect("Approve the plan?")
        terminal.send(b"k\r")
        terminal.expect("Still planning")
        assert terminal.leave() == 0
    sent = chats(server)
    assert len(sent) == 1 and sent[0]["messages"][-1]["content"] == "add a greeting"
    assert "write" not in offered(sent[0]) and "bash" not in offered(sent[0])
    assert {"read", "grep", "todo"} <= offered(sent[0])


def test_an_approved_plan_is_carried_out_in_the_same_session(project: Project) -> None:
    turns = [{"text": PLAN}, WRITE, {"text": "Made hello.txt."}]
    with project.serve(turns) as server, chat_in_terminal(project) as terminal:
        _approve(terminal)
    assert (project.root / "hello.txt").read_text() == "hi\n"
    sent = chats(server)
    assert "write" in offered(sent[1])
    assert sent[1]["messages"][-1]["content"].startswith("The plan is approved.")
    assert sent[1]["messages"][1]["content"] == "add a greeting"  # the same session


def _approve(terminal: Any) -> None:
    terminal.send(b"/plan add a greeting\r")
    terminal.expect("Plan (2 steps):")
    terminal.expect("Approve the plan?")
    terminal.send(b"y\r")
    terminal.expect("[y] once")  # the normal mode asks before a write
    terminal.send(b"y\r")
    terminal.expect("Made hello.txt.")
    assert terminal.leave() == 0


def test_the_marked_line_and_the_cycle() -> None:
    assert split_cycle(CYCLE_MARK + "fix it") == (1, "fix it")
    assert split_cycle("fix" + SHIFT_TAB + SHIFT_TAB) == (2, "fix")
    assert split_cycle("plain") == (0, "plain")
    assert cycle("default", 1) == "plan" and cycle("default", 2) == "accept_edits"
    assert cycle("plan", 5) == "default"
    assert prompt_for("default") == "\n› " and prompt_for("plan") == "\n[plan] › "
