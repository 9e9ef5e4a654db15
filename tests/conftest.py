"""What every test gets: the process environment as it was before the test."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def environment_kept() -> Iterator[None]:
    """Put back the environment a test changed without monkeypatch: a TOTEM_CONFIG left
    behind made a later test's server read another test's config."""
    before = dict(os.environ)
    yield
    if os.environ != before:
        os.environ.clear()
        os.environ.update(before)
