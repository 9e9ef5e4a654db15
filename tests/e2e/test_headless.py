"""`totem run` in scripts, as real processes on the package's fake server: piped input, `-`,
the closing `result` object of `--format json`, budgets, and forks; `totem sessions` and
`totem export`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.headless import Project, json_lines


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def _last_user(project: Project) -> str:
    return str([m for m in project.chats()[-1]["messages"] if m["role"] == "user"][-1]["content"])


def test_piped_input_is_added_to_the_message_as_a_fenced_block(project: Project) -> None:
    with project.serve([{"text": "It is a list."}]):
        done = project.totem("run", "explain this", stdin="line1\nline2\n")
    assert done.returncode == 0, done.stderr
    assert _last_user(project) == "explain this\n\nPiped input (12 bytes):\n```\nline1\nline2\n```"


def test_piped_input_past_the_limit_is_cut_with_a_notice(project: Project) -> None:
    with project.serve([{"text": "Long."}]):
        done = project.totem("run", "summarize", stdin="x" * 150_000)
    assert done.returncode == 0, done.stderr
    sent = _last_user(project)
    assert sent.startswith("summarize\n\nPiped input (150,000 bytes, the first 100,000 kept):")
    assert "[The input was cut: 50,000 more bytes were not included.]" in sent
    assert sent.count("x") == 100_000
    assert "cut to its first 100,000 of 150,000 bytes" in done.stderr


def test_a_dash_reads_the_message_from_stdin(project: Project) -> None:
    with project.serve([{"text": "Four."}]):
        done = project.totem("run", "-", stdin="what is 2+2?\n")
        empty = project.totem("run", "-", stdin="")
    assert done.returncode == 0, done.stderr
    assert _last_user(project) == "what is 2+2?"
    assert empty.returncode == 2 and "stdin is empty" in empty.stderr
    assert len(project.chats()) == 1


def test_json_ends_with_one_result_object(project: Project) -> None:
    turns = [{"text": "Writing it.", "tool": "write",
              "args": {"path": "new.txt", "content": "x\n"}}, {"text": "Made new.txt."}]
    with project.serve(turns):
        done = project.totem("run", "--yes", "--format", "json", "make new.txt")
    assert done.returncode == 0, done.stderr
    seen = json_lines(done.stdout)
    assert [e["type"] for e in seen].count("result") == 1 and seen[-2]["type"] == "run_finished"
    result = seen[-1]
    assert result["type"] == "result" and result["answer"] == "Made new.txt."
    assert result["finish_reason"] == "finished" and result["files_changed"] == ["new.txt"]
    assert result["session_id"] == seen[0]["session_id"] and result["steps"] == 2
    assert result["usage"]["input"] == 20 and result["cost"] is None


def _tool_turns(count: int) -> list[dict[str, object]]:
    return [{"tool": "bash", "args": {"command": f"echo {i}"}} for i in range(count)]


def test_max_cost_stops_the_run_with_exit_3(project: Project) -> None:
    project.config_extra = ""
    with project.serve([*_tool_turns(5), {"text": "never"}]) as server:
        config = project.tmp / "totem.yaml"
        config.write_text(config.read_text().replace(
            "kind: openai,", "kind: openai, models: {m: {price: {input: 1000, output: 1000}}},"))
        done = project.totem("run", "--yes", "--format", "json", "--max-cost", "0.02", "loop")
    assert done.returncode == 3, done.stderr
    seen = json_lines(done.stdout)
    notice = next(e for e in seen if e["type"] == "notice" and "--max-cost" in e["text"])
    assert notice["text"] == "Stopped: the run has cost $0.0300, reaching --max-cost $0.02."
    result = seen[-1]
    assert result["finish_reason"] == "budget" and result["cost"] >= 0.02
    requests = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert len(requests) == 2  # 15 tokens a step at $0.001 a token: $0.015, then $0.03


def test_max_tokens_and_max_turns_stop_with_exit_3(project: Project) -> None:
    with project.serve([*_tool_turns(6), {"text": "closing"}]):
        tokens = project.totem("run", "--yes", "--max-tokens", "25", "loop")
        turns = project.totem("run", "--yes", "--max-turns", "1", "loop")
    assert tokens.returncode == 3 and "reaching --max-tokens 25" in tokens.stdout
    assert turns.returncode == 3 and "step limit" in turns.stdout


def test_fork_continues_a_copy_and_leaves_the_original(project: Project) -> None:
    with project.serve([{"text": "first"}, {"text": "forked"}]):
        one = project.totem("run", "--format", "json", "one")
        original = json_lines(one.stdout)[0]["session_id"]
        two = project.totem("run", "--format", "json", "--fork", original, "two")
    assert two.returncode == 0, two.stderr
    forked = json_lines(two.stdout)[0]["session_id"]
    assert forked != original
    contents = [m.get("content") for m in project.chats()[-1]["messages"][1:]]
    assert contents == ["one", "first", "two"]
    assert len(project.store().messages(original)) == 2
    missing = project.totem("run", "--fork", "ses_nope", "x")
    assert missing.returncode == 2 and "No session with id ses_nope" in missing.stderr


def test_sessions_lists_and_export_scrubs_secrets(project: Project) -> None:
    secret = "tok-" + "9" * 24
    project.env["MY_SERVICE_TOKEN"] = secret
    with project.serve([{"text": "Noted the token."}]):
        done = project.totem("run", "--format", "json", f"remember {secret}")
    session = json_lines(done.stdout)[0]["session_id"]
    listing = project.totem("sessions")
    assert listing.returncode == 0
    row = next(line for line in listing.stdout.splitlines() if line.startswith(session))
    assert "fake/m" in row and "remember" in row and "unknown" in row  # no price known
    rows = json.loads(project.totem("sessions", "--json").stdout)
    assert rows[0]["id"] == session and rows[0]["input_tokens"] == 10
    markdown = project.totem("export", session)
    assert markdown.returncode == 0
    assert "## You" in markdown.stdout and "Noted the token." in markdown.stdout
    assert secret not in markdown.stdout and "remember " in markdown.stdout
    exported = json.loads(project.totem("export", session, "--format", "json").stdout)
    assert exported["format"] == "totem-session/1" and secret not in json.dumps(exported)
    assert project.totem("export", "ses_nope").returncode == 2


def test_an_image_is_attached_for_a_model_that_takes_images(project: Project) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
    (project.root / "shot.png").write_bytes(png)
    with project.serve([{"text": "A black square."}, {"text": "Also."}], models=("gpt-4o",)):
        config = project.tmp / "totem.yaml"
        config.write_text(config.read_text().replace("model: fake/m", "model: fake/gpt-4o"))
        done = project.totem("run", "--image", "shot.png", "what is this?")
        mention = project.totem("run", "compare with @shot.png")
        assert done.returncode == 0 and mention.returncode == 0, done.stderr + mention.stderr
        sent = [[m for m in c["messages"] if m["role"] == "user"][-1] for c in project.chats()]
    import base64
    url = "data:image/png;base64," + base64.b64encode(png).decode()
    assert sent[0]["content"] == [{"type": "text", "text": "what is this?"},
                                  {"type": "image_url", "image_url": {"url": url}}]
    assert sent[1]["content"][1] == {"type": "image_url", "image_url": {"url": url}}


def test_an_image_for_a_model_without_vision_is_a_clear_error(project: Project) -> None:
    (project.root / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    with project.serve([{"text": "never"}]):
        done = project.totem("run", "--image", "shot.png", "what is this?")
        missing = project.totem("run", "--image", "nowhere.png", "what is this?")
    assert done.returncode == 2 and "does not take images" in done.stderr
    assert missing.returncode == 2 and "Cannot read the image nowhere.png" in missing.stderr
    assert project.chats() == []
