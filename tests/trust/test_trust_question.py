"""The terminal's trust question, on a real pseudo-terminal: asked once per folder, naming what
the project config would change; yes is remembered; a change to the config asks again."""

from __future__ import annotations

from pathlib import Path

from tests.support.terminal import in_terminal as run_in_terminal
from tests.support.trust_victims import TOTEM, Victim

QUESTION = b"Trust this folder? [y/N] "


def in_terminal(victim: Victim, answer: bytes | None) -> str:
    """`totem run` on a pseudo-terminal; `answer` typed when the trust question comes."""
    return run_in_terminal([*TOTEM, "run", "hello"], cwd=victim.root, env=victim.env,
                           prompt=QUESTION, answer=answer, times=1, timeout=60)


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
