"""Fixtures for the tool tests: a tmp_path project, a real ToolContext on it with a real
PermissionService (tests.support.tool_calls), and a call as the loop makes it."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tests.support.tool_calls import Call, MakeContext, call_tool, tool_context
from totem.tools.base import ToolContext


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the project, with a secret file in it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("top secret\n")
    return folder


@pytest.fixture
def make_ctx(project: Path) -> MakeContext:
    return functools.partial(tool_context, project)


@pytest.fixture
def ctx(make_ctx: MakeContext) -> ToolContext:
    return make_ctx()


@pytest.fixture
def call() -> Call:
    return call_tool
