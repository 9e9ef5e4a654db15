"""`totem mcp list` and `totem mcp test NAME` as a person runs them (a real process, real
servers; `python -m totem.cli.mcp` is the same code as `totem mcp`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.mcp_servers import EVERYTHING, RAWSERVER, new_mark, node
from tests.support.processes import processes_with


def project(tmp: Path, mark: str) -> tuple[Path, dict[str, str]]:
    root = tmp / "project"
    (root / ".totem").mkdir(parents=True)
    servers = {
        "everything": {
            "command": node(),
            "args": [str(EVERYTHING), "stdio"],
            "env": {"TOTEM_TEST_MARK": mark},
        },
        "gone": {"command": sys.executable, "args": [str(RAWSERVER), "exit"]},
        "later": {"type": "http", "url": "http://127.0.0.1:9/mcp", "enabled": False},
    }
    (root / ".totem" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
    }
    env.pop("TOTEM_CONFIG", None)
    subprocess.run([sys.executable, "-m", "totem", "trust"], cwd=root, env=env, check=True,
                   capture_output=True, timeout=60)  # the project's own servers count
    return root, env


def totem_mcp(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "totem.cli.mcp", *args],
        cwd=root,
        env=env,
        text=True,
        capture_output=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_list_shows_each_server_its_state_and_tools(tmp_path: Path) -> None:
    mark = new_mark()
    root, env = project(tmp_path, mark)
    config = totem_mcp(root, env, "list", "--no-start")
    assert config.returncode == 0, config.stderr
    assert "everything  [stdio]  not started" in config.stdout
    assert "later  [http]  disabled" in config.stdout and "http://127.0.0.1:9/mcp" in config.stdout

    refused = totem_mcp(root, env, "list")  # no terminal, no rule: nothing starts
    assert refused.returncode == 1
    assert "everything  [stdio]  refused (allow it with --yes" in refused.stdout

    started = totem_mcp(root, env, "list", "--yes")
    assert started.returncode == 1  # 'gone' fails
    assert "everything  [stdio]  ready  (protocol 2025-11-25)" in started.stdout
    assert "16 tools: echo, " in started.stdout or "tools: echo, " in started.stdout
    assert "gone  [stdio]  failed: the program exited before it answered" in started.stdout
    assert processes_with(mark) == []


def test_test_starts_one_server_and_says_how_it_went(tmp_path: Path) -> None:
    mark = new_mark()
    root, env = project(tmp_path, mark)
    ok = totem_mcp(root, env, "test", "everything", "--yes")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "everything  [stdio]  ready" in ok.stdout and "gone" not in ok.stdout
    failed = totem_mcp(root, env, "test", "gone", "--yes")
    assert failed.returncode == 1 and "log: " in failed.stdout
    unknown = totem_mcp(root, env, "test", "nope")
    assert unknown.returncode == 2 and "no MCP server named 'nope'" in unknown.stderr
    assert processes_with(mark) == []
