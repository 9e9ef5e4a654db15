"""`totem run` against the aimock simulator: a new, empty folder is a Total.js project, so the
first request carries the primer; with the documentation server (the local stand-in, as the
project's `forge`) the pages found for the prompt are in it too, and the events say so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.aimock import Aimock, aimock_fixture
from tests.support.knowledge_runs import calls, declare_forge, standin_spec
from totem.knowledge.totaljs import TOTALJS

pytestmark = pytest.mark.aimock

aimock = aimock_fixture([{"match": {}, "response": {"content": "Done."}}])


def totem_run(tmp: Path, root: Path, url: str, *args: str) -> list[dict[str, Any]]:
    config = tmp / "totem.yaml"
    config.write_text(f"model: mock/totem-test\nproviders:\n  mock: {{kind: openai, "
                      f"base_url: '{url}'}}\n")
    env = dict(os.environ, TOTEM_CONFIG=str(config))
    done = subprocess.run(
        [sys.executable, "-m", "totem", "run", "--format", "json", *args], cwd=root, env=env,
        capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def system_of(entry: dict[str, Any]) -> str:
    return str(next(m for m in entry["body"]["messages"] if m["role"] == "system")["content"])


def test_a_new_empty_folder_gets_the_primer_in_the_first_request(aimock: Aimock,
                                                                 tmp_path: Path) -> None:
    aimock.clear_journal()
    root = tmp_path / "empty"
    root.mkdir()
    events = totem_run(tmp_path, root, aimock.url, "hola")
    assert events[-2]["reason"] == "finished"  # the last line is the result object
    journal = aimock.journal()
    assert len(journal) == 1 and TOTALJS.primer() in system_of(journal[0])
    python = tmp_path / "python"
    python.mkdir()
    (python / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    totem_run(tmp_path, python, aimock.url, "hola")
    assert TOTALJS.primer() not in system_of(aimock.journal()[-1])


def test_the_pages_found_for_the_prompt_are_in_the_first_request(aimock: Aimock,
                                                                 tmp_path: Path) -> None:
    aimock.clear_journal()
    root = tmp_path / "project"
    root.mkdir()
    log = tmp_path / "forge.log"
    declare_forge(root, standin_spec(log))
    events = totem_run(tmp_path, root, aimock.url, "--yes",
                       "quiero hacer un componente jcomponent de contador")
    shown = [e["text"] for e in events if e["type"] == "notice"]
    assert any(t.startswith('Documentation used (forge, jComponent 20: "create a component')
               for t in shown), shown
    system = system_of(aimock.journal()[0])
    assert TOTALJS.primer() in system and "RECIPE-CREATE-COMPONENT" in system
    assert [c["tool"] for c in calls(log)][0] == "Forge_search"
