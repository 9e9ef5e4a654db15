"""`totem acp` under a client nobody here wrote: `acpx` (npm), a headless ACP client on the
official TypeScript SDK, which offers its own file system and terminal and answers permission
requests by policy (`--approve-all`, `--deny-all`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.headless import Project
from tests.support.required import unavailable

ACPX = Path(__file__).resolve().parents[1] / "node/node_modules/.bin/acpx"
TURNS: list[dict[str, Any]] = [
    {"tool": "read", "args": {"path": "hello.txt"}},
    {"tool": "edit", "args": {"path": "hello.txt", "old_string": "world", "new_string": "there"}},
    {"text": "It said hello world; now it says hello there."},
]


PERMISSION_DENIED = 5  # acpx's exit code when it denied a permission request


def _acpx(project: Project, policy: str, prompt: str, *,
          code: int = 0) -> list[dict[str, Any]]:
    if not ACPX.exists():
        unavailable("acpx is not installed (cd tests/node && npm install)")
    done = subprocess.run(
        [str(ACPX), "--agent", f"{sys.executable} -m totem acp", policy, "--format", "json",
         "--timeout", "60", "exec", prompt],
        cwd=project.root, env={**project.env, "HOME": str(project.tmp / "home")},
        capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == code, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _methods(messages: list[dict[str, Any]]) -> list[str]:
    return [m["method"] for m in messages if "method" in m]


def test_acpx_reads_and_writes_through_its_own_file_system(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (project.root / "hello.txt").write_text("hello world\n")
    with project.serve(TURNS):
        messages = _acpx(project, "--approve-all", "What does hello.txt say? Then change it.")
    methods = _methods(messages)
    assert "fs/read_text_file" in methods and "fs/write_text_file" in methods
    assert "session/request_permission" in methods
    assert (project.root / "hello.txt").read_text() == "hello there\n"
    results = [m["result"] for m in messages if isinstance(m.get("result"), dict)]
    assert {"stopReason": "end_turn"}.items() <= results[-1].items()


def test_acpx_denies_the_edit_and_the_file_stays(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (project.root / "hello.txt").write_text("hello world\n")
    with project.serve(TURNS):
        messages = _acpx(project, "--deny-all", "Change hello.txt.", code=PERMISSION_DENIED)
    assert (project.root / "hello.txt").read_text() == "hello world\n"
    assert "fs/write_text_file" not in _methods(messages)
    failed = [m["params"]["update"] for m in messages if m.get("method") == "session/update"
              and m["params"]["update"].get("status") == "failed"]
    assert failed and "rejected" in json.dumps(failed)
