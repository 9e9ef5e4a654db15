"""Which projects are Total.js ones, cheaply: one listing of the root, package.json read
only when it is there.

    totaljs: always | never     decide for every project
    totaljs: auto (default)     package.json depends on total5; or no package.json and no
                                file of another kind of project (detect.json): a new folder
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

from totem.settings.config import KnowledgeSettings

__all__ = ["depends_on_total5", "detect", "is_new_folder"]

HERE = Path(__file__).parent
MAX_FOLDERS = 20  # folders looked into, one level down
MAX_ENTRIES = 5000  # a root with more entries than this is no new folder


@functools.cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((HERE / "detect.json").read_text(encoding="utf-8"))
    return data


def depends_on_total5(root: Path) -> bool:
    """Whether root/package.json lists total5 among its dependencies of any kind."""
    try:
        package = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(package, dict):
        return False
    name = _data()["dependency"]
    for key in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        deps = package.get(key)
        if isinstance(deps, dict) and name in deps:
            return True
    return False


def is_new_folder(root: Path) -> bool:
    """No package.json and no file that marks another kind of project, at the top or one
    folder down (a `src/app.py` makes a Python project as much as `app.py` does)."""
    data = _data()
    markers = set(data["markers"])
    suffixes = tuple(data["marker_suffixes"])
    folders: list[str] = []
    try:
        with os.scandir(root) as entries:
            for count, entry in enumerate(entries):
                name = entry.name
                if count >= MAX_ENTRIES or name == "package.json" or name in markers:
                    return False
                if name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                elif name.endswith(suffixes):
                    return False
        return not any(_has_source(folder, suffixes) for folder in folders[:MAX_FOLDERS])
    except OSError:
        return False


def _has_source(folder: str, suffixes: tuple[str, ...]) -> bool:
    with os.scandir(folder) as entries:
        for count, entry in enumerate(entries):
            if count >= MAX_ENTRIES:
                return True  # a big folder is not a new project
            if entry.name.endswith(suffixes) and not entry.name.startswith("."):
                return True
    return False


def detect(root: Path, settings: KnowledgeSettings) -> bool:
    if settings.totaljs == "always":
        return True
    if settings.totaljs == "never":
        return False
    if (root / "package.json").is_file():
        return depends_on_total5(root)
    return is_new_folder(root)
