"""`totem run` with a small local model: what it is sent, what it is held to, and the exit
code when its answer claims a change that was never made. A real process and a real HTTP
server playing the model's recorded answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from totem.testing.fake_server import FakeOpenAIServer

SMALL = "qwen2.5-coder-1.5b-instruct"


def run(tmp_path: Path, turns: list[dict[str, Any]], *args: str
        ) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]], Path]:
    root = tmp_path / "project"
    root.mkdir(exist_ok=True)
    server = FakeOpenAIServer(turns, models=[SMALL])
    with server.in_thread() as url:
        config = tmp_path / "totem.yaml"
        config.write_text(
            f"model: local/{SMALL}\nproviders:\n  local: {{kind: openai, base_url: '{url}'}}\n"
        )
        env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"),
                   XDG_CONFIG_HOME=str(tmp_path / "config"), TOTEM_CONFIG=str(config))
        done = subprocess.run(
            [sys.executable, "-m", "totem", "run", "--format", "json", *args],
            cwd=root, env=env, text=True, capture_output=True, timeout=60,
            stdin=subprocess.DEVNULL,
        )
    chats = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    return done, chats, root


def test_a_claimed_fix_that_was_never_made_exits_4(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "utils.py").write_text("def recieve(data):\n    return data\n")
    said = "I have already fixed the typo in utils.py."
    plan = {"text": json.dumps({"files": ["utils.py"], "new_files": [], "kind": "change"})}
    done, chats, root = run(tmp_path, [plan, *[{"text": said}] * 3],
                            "Fix the typo 'recieve' in utils.py.")
    assert done.returncode == 4, done.stderr
    end = json.loads(done.stdout.splitlines()[-2])  # the last line is the result object
    assert end["type"] == "run_finished" and end["reason"] == "unverified"
    assert "recieve" in (root / "utils.py").read_text()
    assert "tools" not in chats[0]  # the plan step: what the request needs, as JSON
    first = chats[1]
    # the planned file has real bodies (not a stub): it is changed with edit, so edit is
    # offered beside write (the tools to look with stay: native tools are the prompt, and
    # the server's cache of it)
    assert [t["function"]["name"] for t in first["tools"]] == [
        "read", "glob", "grep", "edit", "write", "bash"]
    assert first["messages"][0]["content"].startswith("You are totem. You work on the files")
    # the file was read ahead for it, so it is not told to look but to make the change
    assert "def recieve(data):" in json.dumps(first["messages"])
    nudge = chats[2]["messages"][-1]["content"]
    assert nudge.startswith("Nothing has been changed yet, but you said this request needs")
    assert len(chats) == 4  # the plan, two nudges, then the answer is not passed off as success


def test_an_xml_call_printed_as_the_answer_is_run(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "old_backup.py").write_text("x = 1\n")
    turns = [{"text": json.dumps({"files": ["old_backup.py"], "new_files": [],
                                  "kind": "change"})},
             {"text": '<tools><bash command="rm old_backup.py" timeout="10"/></tools>'},
             {"text": "Deleted old_backup.py."}]
    done, _, root = run(tmp_path, turns, "--yes", "Delete the file old_backup.py.")
    assert done.returncode == 0, done.stderr
    assert not (root / "old_backup.py").exists()
    starts = [json.loads(line) for line in done.stdout.splitlines()
              if json.loads(line)["type"] == "tool_start"]
    assert [s["name"] for s in starts[:2]] == ["glob", "read"]  # read ahead by totem
    assert starts[2]["name"] == "bash" and starts[2]["from_text"]
