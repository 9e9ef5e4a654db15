"""What the sandbox tests share: the real bwrap (or a clear skip), a home folder with secrets
in it, and a project holding a git repository.

    require_bwrap()         skip (or fail) unless commands can run in the real bwrap here
    secret_home(folder)     ~/.bashrc, ~/.ssh/id_rsa (PRIVATE_KEY), totem's keys (STORED_KEY)
    git_project(root)       app.py, test_app.py, one commit

Where bwrap is not installed the test fails under TOTEM_REQUIRE_SANDBOX=1 (scripts/test.sh
installs it). Where it is installed but this machine cannot run it (a container without user
namespaces or mounts) the test is skipped with bwrap's own words: no script can change that,
and totem itself then runs commands without the sandbox, asked for (`totem doctor` says why).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.required import unavailable
from totem.sandbox.backend import available

__all__ = ["PRIVATE_KEY", "STORED_KEY", "git_project", "require_bwrap", "secret_home"]

PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY----- not-a-real-key"
STORED_KEY = "sk-stored-in-totem-keys-0123456789"


def require_bwrap() -> None:
    found = available()
    if found.backend == "bwrap":
        return
    if not found.program:  # not installed: the project's scripts install it
        unavailable(f"no bubblewrap: {found.reason}", required_by="TOTEM_REQUIRE_SANDBOX")
    pytest.skip(f"bubblewrap cannot run on this machine, so totem runs commands without the "
                f"sandbox (asked for): {found.reason}")


def secret_home(folder: Path, *, config: Path | None = None) -> Path:
    """`folder` made a home with secrets in it; totem's key store under `config` (the
    XDG_CONFIG_HOME; default folder/.config)."""
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_rsa").write_text(PRIVATE_KEY + "\n")
    (folder / ".bashrc").write_text("# mine\n")
    keys = (config or folder / ".config") / "totem"
    keys.mkdir(parents=True, exist_ok=True)
    (keys / "keys.json").write_text(f'{{"openai": "{STORED_KEY}"}}\n')
    return folder


def git_project(root: Path) -> Path:
    """`root` (made if missing) holding a git repository with one commit of a tested app."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "test_app.py").write_text("from app import add\n\n\ndef test_add():\n"
                                      "    assert add(2, 3) == 5\n")
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "first"], cwd=root, check=True)
    return root
