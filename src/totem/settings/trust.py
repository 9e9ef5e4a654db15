"""Folder trust: a project's own config files may widen what totem does (allow rules, providers,
MCP servers, a longer step limit...), so they are inert until the person trusts the folder.

Trust is remembered in the user's data dir (`trust.json`, honouring XDG_DATA_HOME), keyed by
the folder's real path, with a hash of the project config files' contents: a change to any of
them after trusting asks again. A folder without project config files needs no trust.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from totem.settings.paths import data_dir

__all__ = [
    "fingerprint",
    "forget",
    "is_trusted",
    "project_config_paths",
    "remember",
    "trust_file",
    "trusted_folders",
]


def trust_file() -> Path:
    return data_dir() / "trust.json"


def project_config_paths(root: Path) -> list[Path]:
    """The project's files that trust covers: its config, its MCP servers, its agents."""
    totem = root / ".totem"
    paths = [totem / "config.yaml", totem / "mcp.json"]
    agents = totem / "agents"
    if agents.is_dir():
        paths += sorted(agents.glob("*.md"))
    return [p for p in paths if p.is_file()]


def fingerprint(root: Path) -> str | None:
    """A hash of the project config files' names and contents; None when there are none."""
    paths = project_config_paths(root)
    if not paths:
        return None
    digest = hashlib.sha256()
    for path in paths:
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"\1unreadable")
        digest.update(b"\0")
    return digest.hexdigest()


def _key(root: Path) -> str:
    return os.path.realpath(root)


def _read() -> dict[str, Any]:
    try:
        data = json.loads(trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(data: dict[str, Any]) -> None:
    path = trust_file()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
    temporary.chmod(0o600)
    temporary.replace(path)


def is_trusted(root: Path) -> bool:
    """Whether the folder was trusted with its project config files as they are now."""
    current = fingerprint(root)
    if current is None:
        return True
    entry = _read().get(_key(root))
    return isinstance(entry, dict) and entry.get("digest") == current


def remember(root: Path) -> None:
    """Trust the folder with its project config files as they are now."""
    data = _read()
    data[_key(root)] = {"digest": fingerprint(root) or "", "trusted_at": int(time.time())}
    _write(data)


def forget(root: Path) -> bool:
    """Stop trusting the folder; False when it was not trusted."""
    data = _read()
    found = data.pop(_key(root), None) is not None
    if found:
        _write(data)
    return found


def trusted_folders() -> dict[str, bool]:
    """Every remembered folder, and whether its config files are still those trusted."""
    return {folder: is_trusted(Path(folder)) for folder in sorted(_read())}
