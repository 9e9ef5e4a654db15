"""Where bubblewrap is installed but cannot run (a container without user namespaces, as on
some CI machines), `totem doctor` says so and why, a run says it once as a notice, and
commands are asked for as without a sandbox. The bwrap here is a script on PATH that fails
with the words Debian's bubblewrap prints in such a container."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.headless import Project, json_lines

REFUSAL = ("bwrap: No permissions to create new namespace, likely because the kernel does "
           "not allow non-privileged user namespaces.")


@pytest.fixture
def contained(tmp_path: Path) -> Project:
    """A project whose PATH finds a bwrap that cannot make namespaces."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "bwrap").write_text(f"#!/bin/sh\necho '{REFUSAL}' >&2\nexit 1\n")
    (tools / "bwrap").chmod(0o755)
    project = Project(tmp_path)
    project.env["PATH"] = f"{tools}{os.pathsep}{project.env['PATH']}"
    return project


def test_doctor_says_the_sandbox_is_off_and_why(contained: Project) -> None:
    with contained.serve([]):
        done = contained.totem("doctor")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "sandbox: workspace-write asked for, but commands run WITHOUT it" in done.stdout
    assert REFUSAL in done.stdout and "asked for instead" in done.stdout


def test_a_run_says_so_once_and_asks_for_commands(contained: Project) -> None:
    turns = [{"tool": "bash", "args": {"command": "touch one.txt"}},
             {"tool": "bash", "args": {"command": "touch two.txt"}}, {"text": "Done."}]
    with contained.serve(turns):
        done = contained.totem("run", "--yes", "--format", "json", "go")
    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    notices = [e["text"] for e in events if e["type"] == "notice"
               and "without a sandbox" in e["text"]]
    assert len(notices) == 1 and REFUSAL in notices[0], notices
    assert (contained.root / "one.txt").exists() and (contained.root / "two.txt").exists()
    with contained.serve([{"tool": "bash", "args": {"command": "touch three.txt"}},
                          {"text": "Refused."}]):
        asked = contained.totem("run", "--format", "json", "go")  # no --yes, no terminal
    end = next(e for e in json_lines(asked.stdout) if e["type"] == "tool_end")
    assert end["is_error"] and "needs permission" in end["output"], end
    assert not (contained.root / "three.txt").exists()
