"""Fixtures for the sandbox tests: a project with a git repository, a home folder of its own
with secrets in it (HOME points there), and the real bwrap (skipped when missing, unless
TOTEM_REQUIRE_SANDBOX=1, which scripts/test.sh sets)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.required import unavailable
from totem.sandbox.backend import available

PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY----- not-a-real-key"
STORED_KEY = "sk-stored-in-totem-keys-0123456789"


@pytest.fixture
def bwrap() -> None:
    found = available()
    if found.backend != "bwrap":
        unavailable(f"no working bubblewrap: {found.reason}", required_by="TOTEM_REQUIRE_SANDBOX")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with a .bashrc, an SSH key and totem's key store (XDG_CONFIG_HOME)."""
    folder = tmp_path / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_rsa").write_text(PRIVATE_KEY + "\n")
    (folder / ".bashrc").write_text("# mine\n")
    (folder / ".config" / "totem").mkdir(parents=True)
    (folder / ".config" / "totem" / "keys.json").write_text(f'{{"openai": "{STORED_KEY}"}}\n')
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(folder / ".local" / "share"))
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project folder holding a git repository with one commit."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "test_app.py").write_text("from app import add\n\n\ndef test_add():\n"
                                      "    assert add(2, 3) == 5\n")
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "first"], cwd=root, check=True)
    return root
