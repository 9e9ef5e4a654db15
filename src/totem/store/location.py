"""Where sessions are stored: a SQLite file (the default) or a PostgreSQL database.

    TOTEM_STORE=postgresql://totem@db.example/totem     # wins over the config
    store: postgresql://totem:${env:PGPASSWORD}@db/totem  # in the user's config.yaml

Only the person chooses it: the user's config file or the file named by TOTEM_CONFIG, never a
project's `.totem/config.yaml` (a cloned repository must not send its sessions elsewhere).
A value is `postgresql://...` (or `postgres://...`), `sqlite:///PATH`, or a path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from totem.settings.errors import ConfigError

if TYPE_CHECKING:
    from totem.store.base import Store

__all__ = ["open_store", "store_location"]

_POSTGRES = ("postgresql://", "postgres://")


def _configured() -> str | None:
    """The `store` of the user's own config files (the later file wins), `${env:...}` read."""
    from totem.settings.config import config_files, read_config_file
    from totem.settings.secret import Secret

    found: str | None = None
    user_file, _project_file, *extra = config_files(Path.cwd())
    for path in (user_file, *extra):
        value = read_config_file(path).get("store") if path.is_file() else None
        if value is not None:
            found = Secret(str(value)).reveal()
    return found


def store_location() -> str:
    """TOTEM_STORE, else the user's `store:`, else the SQLite file in the data directory."""
    from totem.settings.paths import data_dir

    return os.environ.get("TOTEM_STORE") or _configured() or str(data_dir() / "totem.db")


def open_store(location: str | None = None) -> Store:
    """The store at `location` (default: `store_location()`), its schema brought up to date."""
    where = location if location is not None else store_location()
    if where.startswith(_POSTGRES):
        try:
            from totem.store.postgres import PostgresStore
        except ImportError:
            raise ConfigError(
                "store: a PostgreSQL store needs psycopg: pip install 'totem[postgres]'"
            ) from None
        return PostgresStore(where)
    if "://" in where and not where.startswith("sqlite://"):
        raise ConfigError(
            "store: expected postgresql://..., sqlite:///PATH or a path to a SQLite file, "
            f"not a {where.split('://', 1)[0]}:// address"
        )
    from totem.store.sqlite import SqliteStore

    return SqliteStore(where.removeprefix("sqlite://"))
