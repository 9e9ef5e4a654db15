"""Fixtures for the sandbox tests (helpers in tests/support/sandbox.py): the real bwrap, a
home folder of its own with secrets in it (HOME points there), a project with a git
repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sandbox import git_project, require_bwrap, secret_home


@pytest.fixture
def bwrap() -> None:
    require_bwrap()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with a .bashrc, an SSH key and totem's key store (XDG_CONFIG_HOME)."""
    folder = secret_home(tmp_path / "home")
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(folder / ".local" / "share"))
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project folder holding a git repository with one commit."""
    return git_project(tmp_path / "project")
