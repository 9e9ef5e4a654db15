"""Lines an editor plugin's bug or a stray write puts on `totem acp`'s stdin: each gets the
answer JSON-RPC 2.0 gives it, and the agent stays alive to answer the next request.

A real `totem acp` process is fed the exact bytes; its stdout is read line by line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.headless import Project

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": 1, "clientCapabilities": {}}}


def _agent(project: Project) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "totem", "acp"], cwd=project.root, env=project.env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


def _exchange(tmp_path: Path, lines: list[bytes]) -> tuple[list[Any], str, int]:
    """Writes `lines` then a real initialize, closes stdin; the answers, stderr and exit code."""
    project = Project(tmp_path)
    agent = _agent(project)
    payload = b"".join(lines) + json.dumps(INITIALIZE).encode() + b"\n"
    out, err = agent.communicate(payload, timeout=60)
    answers = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    return answers, err.decode(), agent.returncode


def _error_code(answer: Any) -> int:
    assert isinstance(answer, dict), answer
    return int(answer["error"]["code"])


def test_a_line_that_is_not_json_gets_a_parse_error_and_the_agent_goes_on(tmp_path: Path) -> None:
    answers, err, code = _exchange(tmp_path, [b'{"jsonrpc": "2.0", "id": 5, "method": \n'])
    assert _error_code(answers[0]) == -32700 and answers[0]["id"] is None
    assert answers[1]["id"] == 1 and "protocolVersion" in answers[1]["result"]
    assert code == 0 and "Traceback" not in err


def test_json_that_is_not_an_object_is_an_invalid_request(tmp_path: Path) -> None:
    lines = [b"42\n", b'"text"\n', b"null\n", b"true\n", b"{}\n",
             b'{"jsonrpc": "2.0", "id": "x"}\n',
             b'{"jsonrpc": "2.0", "id": 3, "method": 17}\n']
    answers, err, code = _exchange(tmp_path, lines)
    assert [_error_code(a) for a in answers[:7]] == [-32600] * 7
    assert [a["id"] for a in answers[:7]] == [None, None, None, None, None, "x", 3]
    assert answers[7]["id"] == 1 and "result" in answers[7], "null ended the agent"
    assert code == 0 and "Traceback" not in err


def test_a_batch_is_refused_request_by_request_and_an_empty_one_as_a_whole(tmp_path: Path) -> None:
    batch = [dict(INITIALIZE, id=7), {"jsonrpc": "2.0", "method": "session/cancel",
                                      "params": {"sessionId": "s"}}, 9]
    answers, err, code = _exchange(tmp_path, [b"[]\n", json.dumps(batch).encode() + b"\n"])
    assert _error_code(answers[0]) == -32600 and answers[0]["id"] is None
    refused = answers[1]
    assert isinstance(refused, list) and [a["id"] for a in refused] == [7, None]
    assert all(_error_code(a) == -32600 for a in refused)
    assert answers[2]["id"] == 1 and "result" in answers[2]
    assert len(answers) == 3 and code == 0 and "Traceback" not in err


def test_an_unknown_notification_is_dropped_with_one_log_line(tmp_path: Path) -> None:
    answers, err, code = _exchange(
        tmp_path, [b'{"jsonrpc": "2.0", "method": "editor/didSomething", "params": {}}\n'])
    assert len(answers) == 1 and answers[0]["id"] == 1 and "result" in answers[0]
    assert "editor/didSomething" in err and "Traceback" not in err
    assert code == 0
