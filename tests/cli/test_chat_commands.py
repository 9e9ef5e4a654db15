"""The chat's own commands in a real terminal (a pty): /undo and /redo, /model, /sessions
and `@path` are handled by totem, and never reach the model as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.chat_pty import chat_in_terminal
from tests.support.headless import Project

ALLOW_EDITS = "permission:\n  - {permission: edit, pattern: '*', action: allow}\n"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    (project.root / "a.txt").write_text("one\n")
    project.config_extra = ALLOW_EDITS
    return project


def _sent_texts(project: Project) -> list[str]:
    return [str(m.get("content")) for c in project.chats() for m in c["messages"]
            if m["role"] == "user"]


def test_undo_and_redo_in_the_chat_are_not_sent_to_the_model(project: Project) -> None:
    turns = [{"tool": "read", "args": {"path": "a.txt"}},
             {"tool": "write", "args": {"path": "a.txt", "content": "two\n"}},
             {"text": "Changed it."}, {"text": "Noted."}]
    with project.serve(turns), chat_in_terminal(project) as terminal:
        terminal.send(b"change a.txt\r")
        terminal.expect("Changed it.")
        terminal.expect("› ", 2)
        assert (project.root / "a.txt").read_text() == "two\n"
        terminal.send(b"/undo\r")
        terminal.expect("restored a.txt")
        assert (project.root / "a.txt").read_text() == "one\n"
        terminal.send(b"/redo\r")
        terminal.expect("Redid")
        assert (project.root / "a.txt").read_text() == "two\n"
        terminal.send(b"/undo\r")
        terminal.expect("Undid", 2)
        terminal.send(b"and now?\r")
        terminal.expect("Noted.")
        assert terminal.leave() == 0
    texts = _sent_texts(project)
    assert not any(t.startswith(("/undo", "/redo")) for t in texts)
    assert "undid the file changes" in " ".join(texts) and texts[-1] == "and now?"


def test_model_switches_the_next_turn_and_a_bad_one_is_refused(project: Project) -> None:
    with project.serve([{"text": "From m2."}], models=("m", "m2")) as server, \
            chat_in_terminal(project) as terminal:
        terminal.send(b"/model nowhere/x\r")
        terminal.expect("Cannot switch")
        terminal.send(b"/model fake/m2\r")
        terminal.expect("model: fake/m2 from the next turn")
        terminal.send(b"hello\r")
        terminal.expect("From m2.")
        assert terminal.leave() == 0
    chats = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    assert [c["model"] for c in chats] == ["m2"]
    assert "/model" not in " ".join(_sent_texts(project))


def test_sessions_lists_and_resumes_one(project: Project) -> None:
    with project.serve([{"text": "First answer."}, {"text": "Second answer."},
                        {"text": "Back in the first."}]):
        assert project.totem("run", "the first session").returncode == 0
        with chat_in_terminal(project) as terminal:
            terminal.send(b"a second one\r")
            terminal.expect("Second answer.")
            terminal.send(b"/sessions\r")
            terminal.expect("resume which?")
            assert "the first session" in terminal.screen
            listed = [line for line in terminal.screen.splitlines() if "the first session" in line]
            number = listed[-1].split()[0]
            terminal.send(number.encode() + b"\r")
            terminal.expect("resumed")
            terminal.send(b"continue it\r")
            terminal.expect("Back in the first.")
            assert terminal.leave() == 0
    last = [m.get("content") for m in project.chats()[-1]["messages"] if m["role"] != "system"]
    assert last == ["the first session", "First answer.", "continue it"]


def test_a_mention_attaches_the_file(project: Project) -> None:
    (project.root / "notes.md").write_text("the secret plan\n")
    with project.serve([{"text": "Read it."}]), chat_in_terminal(project) as terminal:
        terminal.send(b"summarize @notes.md and mail me@example.com\r")
        terminal.expect("Read it.")
        assert terminal.leave() == 0
    sent = _sent_texts(project)[-1]
    assert sent.startswith("summarize @notes.md and mail me@example.com")
    assert "Attached file notes.md:\n```\nthe secret plan\n```" in sent
    assert "example.com:" not in sent


def test_answers_are_drawn_as_markdown_with_the_context_used(project: Project) -> None:
    answer = "## The plan\n\n- **first** step\n- second step\n\nRun `make`."
    with project.serve([{"text": answer}]):
        config = project.tmp / "totem.yaml"
        config.write_text(config.read_text().replace(
            "kind: openai,", "kind: openai, models: {m: {context: 1000}},"))
        with chat_in_terminal(project) as terminal:
            terminal.send(b"plan it\r")
            terminal.expect("── ")
            assert terminal.leave() == 0
    shown = terminal.screen.split("plan it", 1)[1]
    assert "• first step" in shown and "• second step" in shown
    assert "**first**" not in shown and "## The plan" not in shown and "The plan" in shown
    assert "context 2% of 1,000" in shown  # 10 tokens in, 14 out of a 1,000 window


def test_an_image_mention_for_a_model_without_vision_is_refused_and_the_chat_goes_on(
    project: Project,
) -> None:
    (project.root / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    with project.serve([{"text": "Still here."}]), chat_in_terminal(project) as terminal:
        terminal.send(b"look at @shot.png\r")
        terminal.expect("does not take images")
        terminal.send(b"hello\r")
        terminal.expect("Still here.")
        assert terminal.leave() == 0
    assert _sent_texts(project) == ["hello"]


def test_tab_completes_a_model_after_model_and_a_path_after_at(project: Project) -> None:
    (project.root / "notes.md").write_text("plan\n")
    with project.serve([{"text": "Seen."}]), chat_in_terminal(project) as terminal:
        terminal.send(b"/model fa\t\r")
        terminal.expect("model: fake/m from the next turn")
        terminal.expect("› ", 2)  # typed ahead, a line skips readline and its completion
        terminal.send(b"read @no\t\r")
        terminal.expect("Seen.")
        assert terminal.leave() == 0
    assert _sent_texts(project)[-1].startswith("read @notes.md")
