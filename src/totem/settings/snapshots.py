"""What the config says about the work tree's snapshots (totem.snapshots):

    snapshots:
      enabled: true        # a snapshot before each call that may change files
      max_file_mb: 20      # larger files are left out of the snapshots (and said so)
      keep_days: 30        # requests older than this can no longer be undone
      max_store_mb: 2048   # past this the oldest requests' snapshots go first

Off in settings made in code (a test, an embedding); on in what load_config gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["SnapshotSettings", "parse_snapshots"]

MB = 1024 * 1024


@dataclass(slots=True)
class SnapshotSettings:
    enabled: bool = False
    max_file_size: int = 20 * MB  # bytes
    keep_days: float = 30.0
    max_store_size: int = 2048 * MB  # bytes


def parse_snapshots(spec: Any) -> SnapshotSettings:
    """The settings of the config's `snapshots:` value: a mapping, or true/false."""
    if isinstance(spec, bool):
        return SnapshotSettings(enabled=spec)
    spec = spec or {}
    settings = SnapshotSettings(enabled=bool(spec.get("enabled", True)))
    if "max_file_mb" in spec:
        settings.max_file_size = int(float(spec["max_file_mb"]) * MB)
    if "keep_days" in spec:
        settings.keep_days = float(spec["keep_days"])
    if "max_store_mb" in spec:
        settings.max_store_size = int(float(spec["max_store_mb"]) * MB)
    return settings
