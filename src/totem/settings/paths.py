"""Where totem keeps things: XDG directories, computed without importing anything heavy."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["config_dir", "data_dir", "cache_dir"]


def _xdg(var: str, default: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value else Path.home() / default


def config_dir() -> Path:
    return _xdg("XDG_CONFIG_HOME", ".config") / "totem"


def data_dir() -> Path:
    return _xdg("XDG_DATA_HOME", ".local/share") / "totem"


def cache_dir() -> Path:
    return _xdg("XDG_CACHE_HOME", ".cache") / "totem"
