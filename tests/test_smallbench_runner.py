"""The small-model bench runner on a scripted OpenAI-compatible server: fixture, totem as a real
process, the check, the record; a hung model is killed at the timeout."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.smallmodel.agent import Outcome, Setup, read_events, run_task  # noqa: E402
from bench.smallmodel.catalog import load_tasks  # noqa: E402
from bench.smallmodel.report import table  # noqa: E402
from bench.smallmodel.server import ModelServer  # noqa: E402
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
    log = tmp_path / "transcripts" / "create_file.jsonl"
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


STAND_IN = """
import http.server, json, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"data": [{"id": "local"}]} if "models" in self.path else {}).encode()
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
