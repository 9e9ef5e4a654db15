"""`totem run` in a terminal (a pty) against aimock, with server-everything configured in
.totem/mcp.json: the model calls an MCP tool; the person sees and answers the start
question and the tool question; the result comes back; no server process is left after."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.aimock import running_aimock
from tests.support.mcp_servers import EVERYTHING, new_mark, node
from tests.support.processes import processes_with
from tests.support.terminal import in_terminal as run_in_terminal

pytestmark = pytest.mark.aimock

PROMPT = "use the echo tool"
FIXTURES = [
    {
        "match": {"userMessage": PROMPT, "hasToolResult": False},
        "response": {
            "toolCalls": [
                {"name": "everything__echo", "arguments": {"message": "hi from the model"}}
            ]
        },
    },
    {
        "match": {"userMessage": PROMPT, "hasToolResult": True},
        "response": {"content": "The MCP server echoed the message back."},
    },
]
def in_terminal(command: list[str], *, cwd: Path, env: dict[str, str], answer: bytes) -> str:
    """Run `command` on a pseudo-terminal, answer every permission prompt, return the screen."""
    return run_in_terminal(command, cwd=cwd, env=env, prompt=b"[y] once", answer=answer)


def environment(tmp_path: Path, aimock_url: str) -> dict[str, str]:
    config = tmp_path / "totem.yaml"
    config.write_text(
        f"model: mock/totem-test\nproviders:\n  mock: {{kind: openai, base_url: '{aimock_url}'}}\n"
    )
    return {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "TOTEM_CONFIG": str(config),
        "TERM": "dumb",
    }


def test_without_mcp_servers_a_run_loads_nothing_of_mcp(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    fixtures = [{"match": {"userMessage": "hello"}, "response": {"content": "Hi."}}]
    with running_aimock(fixtures) as aimock:
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "totem", "run", "hello"],
            cwd=root,
            env=environment(tmp_path, aimock.url),
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Hi." in done.stdout
    loaded = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert not {"mcp", "mcp_types", "totem.mcp.manager", "totem.mcp.connection"} & loaded


def test_totem_run_asks_to_start_the_server_and_to_call_its_tool(tmp_path: Path) -> None:
    mark = new_mark()
    root = tmp_path / "project"
    (root / ".totem").mkdir(parents=True)
    server = {
        "command": node(),
        "args": [str(EVERYTHING), "stdio"],
        "env": {"TOTEM_TEST_MARK": mark},
    }
    (root / ".totem" / "mcp.json").write_text(json.dumps({"mcpServers": {"everything": server}}))
    with running_aimock(FIXTURES) as aimock:
        env = environment(tmp_path, aimock.url)
        screen = in_terminal(
            [sys.executable, "-m", "totem", "run", "--trust", PROMPT], cwd=root, env=env,
            answer=b"y\n",
        )
        requests = aimock.journal()
    assert "mcp wants to start the MCP server 'everything' (run: " in screen, screen
    assert "dist/index.js stdio  (with TOTEM_TEST_MARK set))" in screen
    assert "everything__echo wants to call echo on the MCP server 'everything'" in screen
    assert "Echo: hi from the model" in screen
    assert "The MCP server echoed the message back." in screen
    assert screen.index("start the MCP server") < screen.index("wants to call echo")
    tools = [t["function"]["name"] for t in requests[0]["body"]["tools"]]
    assert "everything__echo" in tools
    assert processes_with(mark) == []


def test_totem_run_attaches_a_resource_and_sends_a_server_prompt(tmp_path: Path) -> None:
    from totem.testing.fake_server import FakeOpenAIServer

    mark = new_mark()
    root = tmp_path / "project"
    root.mkdir()
    doc = "demo://resource/static/document/features.md"
    server = FakeOpenAIServer([{"text": "Read it."}, {"text": "Prompted."}], models=["m"])
    with server.in_thread() as url:
        env = environment(tmp_path, url)
        Path(env["TOTEM_CONFIG"]).write_text(
            f"model: fake/m\nproviders:\n  fake: {{kind: openai, base_url: '{url}'}}\n"
            "knowledge: {totaljs: never, forge: false}\n"
            f"mcp:\n  everything: {{command: '{node()}', args: ['{EVERYTHING}', 'stdio'], "
            f"env: {{TOTEM_TEST_MARK: '{mark}'}}}}\n")
        runs = [subprocess.run([sys.executable, "-m", "totem", "run", "--yes", text], cwd=root,
                               env=env, capture_output=True, text=True, timeout=120,
                               stdin=subprocess.DEVNULL)
                for text in (f"summarize @everything:{doc}", "/everything:args-prompt Oslo",
                             "/everything:args-prompt")]
    sent = [r.body["messages"][-1]["content"] for r in server.requests
            if r.path.endswith("/chat/completions")]
    assert [r.returncode for r in runs] == [0, 0, 1], [r.stdout + r.stderr for r in runs]
    assert sent[0].startswith(f"summarize @everything:{doc}\n\n<resource")
    assert "Oslo" in sent[1] and len(sent) == 2  # the third never reached the model
    assert "needs city" in runs[2].stdout + runs[2].stderr
    assert processes_with(mark) == []
