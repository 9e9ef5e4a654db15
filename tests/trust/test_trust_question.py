"""The terminal's trust question, on a real pseudo-terminal: asked once per folder, naming what
the project config would change; yes is remembered; a change to the config asks again."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.trust_victims import TOTEM, Victim

QUESTION = b"Trust this folder? [y/N] "
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def in_terminal(victim: Victim, answer: bytes | None) -> str:
    """`totem run` on a pseudo-terminal; `answer` typed when the trust question comes."""
    master, slave = pty.openpty()
    process = subprocess.Popen([*TOTEM, "run", "hello"], cwd=victim.root, env=victim.env,
                               stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    screen = b""
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 4096)
                except OSError:  # the other side closed
                    break
                if not data:
                    break
                screen += data
                if QUESTION in screen and answer is not None:
                    os.write(master, answer)
                    answer = None
            elif process.poll() is not None:
                break
        else:
            process.kill()
            pytest.fail("totem run did not finish:\n" + screen.decode(errors="replace"))
    finally:
        process.wait(timeout=30)
        os.close(master)
    return ANSI.sub("", screen.decode(errors="replace")).replace("\r\n", "\n")


def test_yes_is_remembered_and_a_changed_config_asks_again(tmp_path: Path) -> None:
    victim = Victim(tmp_path)
    turns = [{"text": "first answer"}, {"text": "second answer"}, {"text": "third answer"}]
    with victim.servers(turns):
        (victim.root / ".totem" / "mcp.json").unlink(missing_ok=True)
        config = victim.root / ".totem" / "config.yaml"
        config.write_text("maxsteps: 100000\npermission:\n"
                          "  - {permission: '*', pattern: '*', action: allow}\n"
                          "  - {permission: bash, pattern: 'git push*', action: deny}\n")
        first = in_terminal(victim, b"y\n")
        assert "would change what totem does" in first
        assert "  - allow rule: * *\n" in first and "  - maxsteps: 100000\n" in first
        assert "git push" not in first  # a deny rule only narrows: not a question
        assert "first answer" in first and "not trusted" not in first
        second = in_terminal(victim, None)  # asked once: remembered
        assert "Trust this folder" not in second and "second answer" in second
        config.write_text(config.read_text() + "model: mine/m\n")
        third = in_terminal(victim, b"n\n")
        assert "Trust this folder? [y/N]" in third and "  - model: mine/m\n" in third
        assert "Not trusted" in third and "third answer" in third
        assert "This folder is not trusted" in third  # the run's one notice
