"""Fixtures of the core tests: the session store on each backend (SQLite, and a real
PostgreSQL started once for the test session)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.postgres import PostgresServer, postgres_server


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    with postgres_server() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def new_store_location(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Callable[[], str]:
    """Makes the location of a new, empty store on the backend of the test's parameter."""
    if request.param == "sqlite":
        numbers = iter(range(1, 10_000))
        return lambda: str(tmp_path / f"store{next(numbers)}" / "totem.db")
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.new_database
