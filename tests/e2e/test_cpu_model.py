"""A real model that really decides: Qwen2.5-Coder 0.5B served by llama.cpp on the CPU.

Needs `scripts/cpu-model.sh` to have cached the model and llama-server (the README's test
command does it). Skipped when they are missing, unless TOTEM_REQUIRE_CPU_MODEL=1 (CI).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cpu_model import running_llama

pytestmark = pytest.mark.cpu_model


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with running_llama(context=8192, options=["--jinja"], log=log) as port:
        yield f"http://127.0.0.1:{port}/v1"


def test_real_model_calls_a_tool_and_the_run_ends_visibly(llama_url: str, tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text("# Marmalade\n\nMarmalade is a tiny jam-making library.\n")
    (root / "jam.py").write_text("def boil(fruit):\n    return fruit + ' jam'\n")
    config = tmp_path / "totem.yaml"
    config.write_text(
        "model: local/qwen2.5-coder-0.5b-instruct\n"
        f"providers:\n  local: {{kind: openai, base_url: '{llama_url}'}}\n"
    )
    env = dict(os.environ, TOTEM_CONFIG=str(config), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-m", "totem", "run", "--format", "json", "--max-steps", "4",
         "Use the read tool to read README.md, then tell me the name of the project."],
        cwd=root, env=env, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
    )
    events: list[dict[str, Any]] = [json.loads(x) for x in done.stdout.splitlines() if x.strip()]
    elapsed = time.time() - started
    print(f"cpu model run: {elapsed:.1f} s, exit {done.returncode}")
    for event in events:
        if event["type"] in ("tool_start", "tool_end", "notice", "run_finished"):
            print(json.dumps(event)[:300])
    # the model took at least one step
    steps = [e for e in events if e["type"] == "step_finished"]
    assert steps, f"no step finished: {done.stdout[-2000:]} {done.stderr[-2000:]}"
    # totem read README.md ahead; every call of the run (its own and the model's) ran with
    # well-formed arguments (the model may answer at once from what was read)
    starts = [e for e in events if e["type"] == "tool_start"]
    assert any(s["name"] == "read" and s["input"].get("path") == "README.md" for s in starts)
    ends = [e for e in events if e["type"] == "tool_end"]
    assert len(ends) == len(starts)
    assert all("Invalid arguments" not in e["output"] for e in ends)
    assert all(s["name"] in ("read", "glob", "grep", "edit", "write", "bash") for s in starts)
    # and the run ends with a visible reason, never hanging
    end = events[-2]  # the last line is the result object
    assert end["type"] == "run_finished"
    # an edit asked without --yes is refused: three refusals also end the run by itself
    assert end["reason"] in ("finished", "repeat", "step_limit", "rejected", "unverified"), end
    assert done.returncode in (0, 3, 4)


def test_detection_finds_llama_server_and_totem_uses_it(llama_url: str, tmp_path: Path) -> None:
    import asyncio

    from totem.providers.catalog.detect import detect

    port = int(llama_url.rsplit(":", 1)[1].split("/")[0])
    found = asyncio.run(detect(ports={"llamacpp": port}))
    assert [f.name for f in found] == ["llamacpp"]
    assert found[0].base_url == llama_url and not found[0].needs_key
    # with no provider configured, `totem run` uses what it finds, and says which
    root = tmp_path / "project"
    root.mkdir()
    config = tmp_path / "totem.yaml"
    config.write_text(f"detect: {{ports: {{llamacpp: {port}}}}}\n")
    env = dict(os.environ, TOTEM_CONFIG=str(config), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    done = subprocess.run(
        [sys.executable, "-m", "totem", "run", "--format", "json", "--max-steps", "1",
         "Reply with the single word: hello"],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
        stdin=subprocess.DEVNULL,
    )
    events = [json.loads(x) for x in done.stdout.splitlines() if x.strip()]
    notices = [e["text"] for e in events if e["type"] == "notice"]
    assert any("No provider is configured: using llamacpp" in n for n in notices), notices
    assert events[-2]["type"] == "run_finished" and done.returncode in (0, 3)
