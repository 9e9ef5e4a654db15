"""The real 0.5B model served as `local` (llama-server --alias): totem knows it from the
server's /props and asks for constrained steps; every step parses into a valid tool call
or an answer, and the run ends by itself.

A recording pass-through between totem and llama-server keeps what went over the wire.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cpu_model import running_llama
from tests.support.llama_like import RecordingProxy

pytestmark = pytest.mark.cpu_model


@pytest.fixture(scope="module")
def local_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("llama-local") / "server.log"
    with running_llama(context=8192, options=["--jinja", "--alias", "local"], log=log) as port:
        url = f"http://127.0.0.1:{port}/v1"
        yield url


def _streamed_text(answer: bytes) -> str:
    text = ""
    for line in answer.decode("utf-8", "replace").splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices") or []:
                text += (choice.get("delta") or {}).get("content") or ""
    return text


def test_the_small_model_served_as_local_takes_constrained_steps(
    local_url: str, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text("# Marmalade\n\nMarmalade is a tiny jam-making library.\n")
    with RecordingProxy(local_url.removesuffix("/v1")) as proxy:
        config = tmp_path / "totem.yaml"
        config.write_text("model: local/local\nproviders:\n"
                          f"  local: {{kind: openai, base_url: '{proxy.base_url}'}}\n")
        env = dict(os.environ, TOTEM_CONFIG=str(config), XDG_DATA_HOME=str(tmp_path / "data"),
                   XDG_CONFIG_HOME=str(tmp_path / "cfg"))
        done = subprocess.run(
            [sys.executable, "-m", "totem", "run", "--format", "json", "--max-steps", "3",
             "Use the read tool to read README.md, then tell me the name of the project."],
            cwd=root, env=env, capture_output=True, text=True, timeout=900,
            stdin=subprocess.DEVNULL,
        )
        bodies, answers = list(proxy.bodies), list(proxy.answers)
    events: list[dict[str, Any]] = [json.loads(x) for x in done.stdout.splitlines() if x.strip()]
    for event in events:
        if event["type"] in ("tool_start", "tool_end", "notice", "run_finished"):
            print(json.dumps(event)[:300])
    # the request: constrained steps, calm and bounded, no native tools
    held = [(b, a) for b, a in zip(bodies, answers, strict=True) if "response_format" in b]
    # the plan step comes first: what the request needs, held to its own schema
    plans = [(b, a) for b, a in held
             if "kind" in b["response_format"]["json_schema"]["schema"].get("properties", {})]
    assert plans and json.loads(_streamed_text(plans[0][1]))["kind"] in ("question", "change")
    steps = [(b, a) for b, a in held if (b, a) not in plans]
    assert steps, f"no constrained request: {[sorted(b) for b in bodies]} {done.stderr[-2000:]}"
    first = steps[0][0]
    assert "tools" not in first and first["temperature"] == 0.2
    assert 256 <= first["max_tokens"] <= 2048
    schema = first["response_format"]["json_schema"]["schema"]
    offered = {s["properties"]["tool"]["const"]
               for s in schema["anyOf"] if "tool" in s["properties"]}
    assert "read" in offered
    # every answer the model gave is one valid step
    for _, answer in steps:
        step = json.loads(_streamed_text(answer))
        assert set(step) in ({"tool", "args"}, {"answer"}), step
        if "tool" in step:
            assert step["tool"] in offered and isinstance(step["args"], dict)
    # the steps became tool calls that ran, and the run ended by itself
    starts = [e for e in events if e["type"] == "tool_start"]
    # README.md is read (ahead, by totem, or by the model itself)
    assert any(s["name"] == "read" and s["input"].get("path") == "README.md" for s in starts), \
        events[:20]
    ends = [e for e in events if e["type"] == "tool_end"]
    assert all("Invalid arguments" not in e["output"] for e in ends)
    end = next(e for e in events if e["type"] == "run_finished")
    # without --yes an edit is refused, and three refusals end the run by themselves
    assert end["reason"] in ("finished", "repeat", "step_limit", "rejected", "unverified"), end
    assert done.returncode in (0, 3, 4)


def test_a_change_asked_of_the_small_model_starts_from_the_files_read_ahead(
    local_url: str, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("first note\n")
    with RecordingProxy(local_url.removesuffix("/v1")) as proxy:
        config = tmp_path / "totem.yaml"
        config.write_text("model: local/local\nproviders:\n"
                          f"  local: {{kind: openai, base_url: '{proxy.base_url}'}}\n")
        env = dict(os.environ, TOTEM_CONFIG=str(config), XDG_DATA_HOME=str(tmp_path / "data"),
                   XDG_CONFIG_HOME=str(tmp_path / "cfg"))
        done = subprocess.run(
            [sys.executable, "-m", "totem", "run", "--yes", "--format", "json", "--max-steps",
             "4", "Add the line 'second note' at the end of notes.txt."],
            cwd=root, env=env, capture_output=True, text=True, timeout=900,
            stdin=subprocess.DEVNULL,
        )
        bodies = list(proxy.bodies)
    events: list[dict[str, Any]] = [json.loads(x) for x in done.stdout.splitlines() if x.strip()]
    starts = [e for e in events if e["type"] == "tool_start"]
    # totem listed the project and read notes.txt before the model's first step
    assert [(s["name"], s["input"].get("path")) for s in starts[:2]] == [
        ("glob", None), ("read", "notes.txt")], starts[:4]
    first = next(b for b in bodies if "anyOf" in
                 b.get("response_format", {}).get("json_schema", {}).get("schema", {}))
    assert "first note" in json.dumps(first["messages"])
    # where the model's plan said a change, its first step could only be a call
    planned = [e["text"] for e in events if e["type"] == "notice"
               and e["text"].startswith("The model's plan:")]
    assert planned, events[:10]
    options = first["response_format"]["json_schema"]["schema"]["anyOf"]
    if "a change" in planned[0]:
        assert all("tool" in o["properties"] for o in options)
    assert len(starts) > 2, events[:20]
    assert any(e["type"] == "run_finished" for e in events), events[-3:]
    assert done.returncode in (0, 3, 4)
