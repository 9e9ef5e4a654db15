"""The `web` marker (browser tests) is declared here too, so that these tests run under
`--strict-markers` before pyproject.toml lists it."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "web: drives a real headless Chromium (scripts/web-test-deps.sh)")
