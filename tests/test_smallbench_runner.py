"""The small-model bench runner on a scripted OpenAI-compatible server: fixture, totem as a real
process, the check, the record; a hung model is killed at the timeout."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.smallmodel.agent import Outcome, Setup, read_events, run_task  # noqa: E402
from bench.smallmodel.catalog import load_tasks  # noqa: E402
from bench.smallmodel.report import same_rate, table  # noqa: E402
from bench.smallmodel.server import ModelServer, under_name  # noqa: E402
from totem.testing.fake_server import running_in_thread  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _setup(url: str, tmp_path: Path, *, timeout: float = 120) -> Setup:
    return Setup(totem_src=REPO, base_url=url, model_id="local", timeout=timeout,
                 scratch=tmp_path / "scratch", transcripts=tmp_path / "transcripts")


def test_a_scripted_solution_passes_and_is_recorded(tmp_path: Path) -> None:
    [task] = load_tasks(["create_file"])
    turns = [
        {"tool": "write", "args": {"path": "NOTES.md", "content": "Release 4.2 ships on "
                                   "Friday the 13th.\n"}},
        {"text": "I created NOTES.md."},
    ]
    with running_in_thread(turns, models=["local"]) as url:
        outcome = run_task(task, _setup(url, tmp_path), model="fake", round_no=1)
    assert outcome.passed, outcome.reason
    assert outcome.tools == ["write"]
    assert outcome.exit_code == 0 and not outcome.timed_out
    assert outcome.answer == "I created NOTES.md."
    assert outcome.steps == 2
    assert outcome.wording == "direct"
    log = tmp_path / "transcripts" / "direct" / "create_file.jsonl"
    assert json.loads(log.read_text().splitlines()[0])["type"] == "run_started"
    stored = json.loads(log.with_suffix(".messages.json").read_text())
    [call] = [row["data"] for row in stored if row["type"] == "tool"]
    assert json.loads(call["raw_input"])["path"] == "NOTES.md"


def test_a_wrong_answer_fails_with_the_reason(tmp_path: Path) -> None:
    [task] = load_tasks(["read_ini_port"])
    with running_in_thread([{"text": "It listens on port 8080."}], models=["local"]) as url:
        outcome = run_task(task, _setup(url, tmp_path), model="fake", round_no=1)
    assert not outcome.passed
    assert outcome.reason == "answer lacks 8437"


def test_a_wording_is_sent_and_judged_in_the_form_it_asks_for(tmp_path: Path) -> None:
    [task] = load_tasks(["read_ini_port"])
    prompt = task.wordings["terse"].prompt
    with running_in_thread([{"text": "ANSWER: 8437"}], models=["local"]) as url:
        outcome = run_task(task, _setup(url, tmp_path), model="fake", round_no=1,
                           wording="terse")
    assert outcome.passed and outcome.wording == "terse", outcome.reason
    log = tmp_path / "transcripts" / "terse" / "read_ini_port.jsonl"
    stored = json.loads(log.with_suffix(".messages.json").read_text())
    assert any(row["role"] == "user" and prompt in json.dumps(row["data"]) for row in stored)
    # the right value, but not in the form the request asked for
    with running_in_thread([{"text": "It is 8437."}], models=["local"]) as url:
        bare = run_task(task, _setup(url, tmp_path), model="fake", round_no=1, wording="terse")
    assert not bare.passed and bare.reason == "answer is not a line 'ANSWER: <value>'"


def test_a_hung_model_is_killed_at_the_timeout(tmp_path: Path) -> None:
    [task] = load_tasks(["delete_file"])
    with running_in_thread([{"error": "hang"}], models=["local"]) as url:
        outcome = run_task(task, _setup(url, tmp_path, timeout=8), model="fake", round_no=1)
    assert outcome.timed_out and outcome.exit_code is None
    assert not outcome.passed and outcome.reason == "old_notes.txt still there"


def test_events_give_tokens_tools_and_the_final_answer(tmp_path: Path) -> None:
    log = tmp_path / "t.jsonl"
    events = [
        {"type": "text", "text": "Let me look. "},
        {"type": "tool_start", "call_id": "1", "name": "read", "input": {}, "from_text": True},
        {"type": "tool_end", "call_id": "1", "name": "read", "output": "x", "is_error": True},
        {"type": "step_finished", "step": 1, "finish": "tool_calls",
         "usage": {"input": 100, "output": 7}},
        {"type": "text", "text": "It is 8080."},
        {"type": "step_finished", "step": 2, "finish": "stop",
         "usage": {"input": 100, "output": 2}},
        # a nudge sent the answer back; the one given again is the answer
        {"type": "notice", "level": "info", "text": "asking the model to look"},
        {"type": "text", "text": "It is 8437."},
        {"type": "step_finished", "step": 3, "finish": "stop",
         "usage": {"input": 20, "output": 3}},
        {"type": "run_finished", "reason": "finished", "detail": "", "steps": 3},
    ]
    log.write_text("\n".join(json.dumps(e) for e in events) + "\nnot json\n")
    outcome = Outcome(task="t", model="m", round=1, passed=False, reason="", wall_s=1.0,
                      exit_code=0, timed_out=False)
    read_events(log, into=outcome)
    assert (outcome.prompt_tokens, outcome.completion_tokens) == (220, 12)
    assert outcome.tools == ["read"] and outcome.from_text == 1 and outcome.tool_errors == 1
    assert outcome.answer == "It is 8437."
    assert outcome.finish == "finished"
    text = table([outcome.to_dict() | {"passed": True}])
    assert "round 1: 1/1 passed" in text and "tokens 220 prompt + 12 completion" in text


def _row(task: str, wording: str, round_no: int, passed: bool) -> dict[str, object]:
    outcome = Outcome(task=task, model="m", round=round_no, passed=passed, reason="",
                      wall_s=3.0, exit_code=0, timed_out=False, wording=wording)
    return outcome.to_dict()


def test_the_table_puts_the_wordings_side_by_side() -> None:
    rows = [
        _row("alpha", "direct", 1, True), _row("alpha", "terse", 1, True),
        _row("alpha", "direct", 2, True), _row("alpha", "terse", 2, False),
        _row("beta", "direct", 1, False), _row("beta", "terse", 1, False),
        _row("beta", "direct", 2, True), _row("beta", "terse", 2, True),
        _row("gamma", "direct", 1, True), _row("gamma", "direct", 2, True),
    ]
    text = table(rows)
    assert "== m, direct ==" in text and "== m, terse ==" in text
    side = text[text.index("== m: by wording (rounds 1, 2) =="):].splitlines()
    assert side[1].split() == ["direct", "terse", "same"]
    assert side[2].split() == ["alpha", "PP", "Pf", "no"]
    assert side[3].split() == ["beta", "fP", "fP", "yes"]
    assert side[4].split() == ["gamma", "PP", "-", "-"]
    assert side[5].split() == ["passed,", "round", "1", "2/3", "1/2"]
    assert side[6].split() == ["passed,", "round", "2", "3/3", "1/2"]
    assert side[7] == "same pass rate in every wording: 1/2 tasks"
    # rows saved before there were wordings are the direct ones
    old = {k: v for k, v in _row("alpha", "direct", 1, True).items() if k != "wording"}
    assert same_rate([old, _row("alpha", "terse", 1, True)]) is True
    assert "by wording" not in table([old])


STAND_IN = """
import http.server, json, sys
args = sys.argv
served = args[args.index("--alias") + 1] if "--alias" in args else args[args.index("-m") + 1]
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"data": [{"id": served}]} if "models" in self.path else {}).encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)
port = int(sys.argv[sys.argv.index("--port") + 1])
http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


def test_a_crashed_server_is_noticed_and_restarted(tmp_path: Path) -> None:
    # a stand-in for llama-server that answers /health and /v1/models on the port it is given
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    binary = tmp_path / "llama-server"
    binary.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n')
    binary.chmod(0o755)
    server = ModelServer(tmp_path / "m.gguf", binary, log=tmp_path / "server.log",
                         alias="local", threads=1)
    with server:
        assert server.alive() and server.model_id == "local"
        assert server._process is not None
        server._process.kill()
        server._process.wait()
        assert not server.alive()
        server.restart()
        assert server.alive() and server.model_id == "local"
    assert not server.alive()


def test_the_model_file_can_be_given_another_name(tmp_path: Path) -> None:
    # as llama-server does, the stand-in serves the model under its path when given no alias
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    binary = tmp_path / "llama-server"
    binary.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n')
    binary.chmod(0o755)
    gguf = tmp_path / "cache" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF")
    link = under_name(gguf, "model.gguf", folder=tmp_path / "scratch" / "model-files")
    assert link.name == "model.gguf" and link.resolve() == gguf and link.read_bytes() == b"GGUF"
    assert under_name(gguf, "model.gguf", folder=link.parent) == link  # again: replaced
    for bad in ("", "a/b.gguf", ".."):
        with pytest.raises(SystemExit, match="plain file name"):
            under_name(gguf, bad, folder=link.parent)
    with ModelServer(link, binary, log=tmp_path / "server.log", alias=None, threads=1) as server:
        assert server.model_id == str(link) and "qwen" not in server.model_id
    with ModelServer(link, binary, log=tmp_path / "server.log", alias="local",
                     threads=1) as server:
        assert server.model_id == "local"
