"""`totem run` as a user runs it: a real process, a real HTTP server (the fake shipped in the
package, itself validated by the official SDK), real tools on a real folder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.ports import closed_port
from totem.store.sqlite import SqliteStore
from totem.testing.fake_server import FakeOpenAIServer

TOTEM = [sys.executable, "-m", "totem"]


class Env:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.root = tmp / "project"
        self.root.mkdir()
        (self.root / "hello.txt").write_text("hello world\n")
        self.server: FakeOpenAIServer | None = None
        self.env = dict(
            os.environ,
            XDG_DATA_HOME=str(tmp / "data"),
            XDG_CONFIG_HOME=str(tmp / "config"),
            TOTEM_CONFIG=str(tmp / "totem.yaml"),
        )

    @contextmanager
    def serve(self, turns: list[dict[str, Any]]) -> Iterator[str]:
        self.server = FakeOpenAIServer(turns, models=["m"])
        with self.server.in_thread() as url:
            (self.tmp / "totem.yaml").write_text(
                f"model: fake/m\nproviders:\n  fake: {{kind: openai, base_url: '{url}'}}\n"
            )
            yield url

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*TOTEM, "run", *args], cwd=self.root, env=self.env, text=True,
            capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL,
        )

    def chats(self) -> list[dict[str, Any]]:
        assert self.server is not None
        return [r.body for r in self.server.requests if r.path.endswith("/chat/completions")]

    def store(self) -> SqliteStore:
        return SqliteStore(self.tmp / "data" / "totem" / "totem.db")


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def events(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_version_prints_and_exits() -> None:
    out = subprocess.run([*TOTEM, "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("totem ")


def test_json_run_with_a_tool_call(env: Env) -> None:
    turns = [{"tool": "read", "args": {"path": "hello.txt"}}, {"text": "It says hello world."}]
    with env.serve(turns):
        done = env.run("--format", "json", "what does hello.txt say?")
    assert done.returncode == 0, done.stderr
    seen = events(done.stdout)
    kinds = [e["type"] for e in seen]
    assert kinds[0] == "run_started" and kinds[-2:] == ["run_finished", "result"]
    end = next(e for e in seen if e["type"] == "tool_end")
    assert "hello world" in end["output"] and not end["is_error"]
    second = env.chats()[1]["messages"]
    assert second[-1]["role"] == "tool" and "hello world" in second[-1]["content"]


def test_text_mode_streams_answer_and_shows_tools(env: Env) -> None:
    turns = [{"tool": "glob", "args": {"pattern": "*.txt"}}, {"text": "One file: hello.txt."}]
    with env.serve(turns):
        done = env.run("list the text files")
    assert done.returncode == 0, done.stderr
    assert "● glob" in done.stdout and "One file: hello.txt." in done.stdout


def test_headless_write_is_denied_and_says_so(env: Env) -> None:
    turns = [{"tool": "write", "args": {"path": "new.txt", "content": "x"}}, {"text": "ok"}]
    with env.serve(turns):
        done = env.run("--format", "json", "write a file")
    end = next(e for e in events(done.stdout) if e["type"] == "tool_end")
    assert end["is_error"] and "--yes" in end["output"]
    assert not (env.root / "new.txt").exists()


def test_yes_allows_and_limits_give_exit_code_3(env: Env) -> None:
    turns = [{"tool": "bash", "args": {"command": f"echo step{i}"}} for i in range(6)]
    with env.serve([*turns, {"text": "closing answer"}]):
        done = env.run("--yes", "--max-steps", "3", "loop")
    assert done.returncode == 3
    assert "step0" not in done.stderr and "closing answer" in done.stdout
    assert "step limit" in done.stdout


def test_path_outside_the_project_is_refused(env: Env) -> None:
    (env.tmp / "secret.txt").write_text("top secret")
    turns = [{"tool": "read", "args": {"path": "../secret.txt"}}, {"text": "cannot"}]
    with env.serve(turns):
        done = env.run("--format", "json", "read it")
    end = next(e for e in events(done.stdout) if e["type"] == "tool_end")
    assert end["is_error"] and "outside the project" in end["output"]
    assert "top secret" not in done.stdout


def test_no_model_configured_is_a_clear_usage_error(env: Env) -> None:
    env.env.pop("TOTEM_CONFIG")
    done = env.run("hello")
    assert done.returncode == 2 and "No model is configured" in done.stderr


def test_auth_failure_exits_1_with_the_reason(env: Env) -> None:
    with env.serve([{"error": "auth"}]):
        done = env.run("hello")
    assert done.returncode == 1
    assert "provider failed" in done.stdout


def test_a_local_server_that_is_not_there_fails_fast_and_says_how_to_start_it(
    env: Env,
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    (env.tmp / "totem.yaml").write_text(
        f"model: local/m\nproviders:\n  local: {{kind: openai, base_url: '{url}'}}\n"
    )
    done = env.run("--format", "json", "hello")
    assert done.returncode == 1, done.stderr
    seen = events(done.stdout)
    retries = [e for e in seen if e["type"] == "notice" and "retrying" in e["text"]]
    assert len(retries) == 2  # two retries, not ten
    end = seen[-2]
    assert end["type"] == "run_finished" and end["reason"] == "error"
    assert seen[-1]["finish_reason"] == "error" and seen[-1]["detail"] == end["detail"]
    assert f"nothing answers at {url} — start your model server" in end["detail"]
    assert "llama-server" in end["detail"] and "base_url" in end["detail"]


def test_a_cut_answer_starts_again_on_a_line_of_its_own_after_the_notice(env: Env) -> None:
    turns = [{"text": "Half of the", "cut": True}, {"text": "The whole answer."}]
    with env.serve(turns):
        done = env.run("hello")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    notice = next(i for i, line in enumerate(lines) if "Connection lost mid-answer" in line)
    assert lines[notice - 1] == "Half of the"
    assert lines[notice + 1] == "The whole answer."
    assert done.stdout.count("Half of the") == 1


def test_continue_resumes_the_latest_session(env: Env) -> None:
    with env.serve([{"text": "first"}, {"text": "second"}]):
        assert env.run("one").returncode == 0
        assert env.run("--continue", "two").returncode == 0
    contents = [m.get("content") for m in env.chats()[1]["messages"]]
    assert contents[1:] == ["one", "first", "two"]


def _descendant_sleeps(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in environ and cmd.startswith(b"sleep\x00"):
            found.append(int(pid))
    return found


def test_sigint_during_bash_kills_everything_and_keeps_the_partial_answer(env: Env) -> None:
    marker = f"TOTEM_TEST_MARK={os.getpid()}_{time.time_ns()}"
    env.env["TOTEM_TEST_MARK"] = marker.split("=", 1)[1]
    turns = [
        {"text": "Starting the sleeps.", "tool": "bash",
         "args": {"command": "sleep 100 & sleep 100; wait"}},
        {"text": "resumed fine"},
    ]
    with env.serve(turns):
        proc = subprocess.Popen(
            [*TOTEM, "run", "--yes", "--format", "json", "sleep please"], cwd=env.root,
            env=env.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            stdin=subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            if json.loads(line)["type"] == "tool_start":
                break
        deadline = time.time() + 10
        while len(_descendant_sleeps(marker)) < 2 and time.time() < deadline:
            time.sleep(0.05)
        assert len(_descendant_sleeps(marker)) == 2
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=20)
        assert proc.returncode == 130
        assert events(rest)[-2]["reason"] == "aborted"
        assert events(rest)[-1]["finish_reason"] == "aborted"
        time.sleep(0.2)
        assert _descendant_sleeps(marker) == []
        store = env.store()
        session = store.list_sessions(str(env.root.resolve()))[0]
        stored = store.messages(session.id)[1]
        assert stored.text() == "Starting the sleeps."
        tool = next(p for p in stored.parts if p.type == "tool")
        assert tool.type == "tool" and tool.output == "[Aborted by user]"
        resumed = env.run("--continue", "go on")
    assert resumed.returncode == 0 and "resumed fine" in resumed.stdout
    last = env.chats()[-1]["messages"]
    assert any(m["role"] == "tool" and "[Aborted by user]" in m["content"] for m in last)


def test_kill_9_mid_answer_loses_nothing_shown(env: Env) -> None:
    turns = [{"text": "Here is the first half of my answer", "stall": True}, {"text": "again"}]
    with env.serve(turns):
        proc = subprocess.Popen(
            [*TOTEM, "run", "--format", "json", "explain"], cwd=env.root, env=env.env,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            stdin=subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        shown = ""
        for line in proc.stdout:
            event = json.loads(line)
            shown += event.get("text", "") if event["type"] == "text" else ""
            if shown == "Here is the first half of my answer":
                break
        time.sleep(0.2)  # let the 50 ms flush of streamed text happen, as it would for a user
        proc.kill()
        proc.wait(timeout=10)
        proc.stdout.close()
        store = env.store()
        session = store.list_sessions(str(env.root.resolve()))[0]
        assert store.messages(session.id)[1].text() == shown
        resumed = env.run("--session", session.id, "go on")
    assert resumed.returncode == 0 and "again" in resumed.stdout
    assert env.chats()[-1]["messages"][2]["content"] == shown
