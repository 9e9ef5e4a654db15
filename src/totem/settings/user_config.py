"""The user configuration file (`~/.config/totem/config.yaml`): the one reader and writer
used by everything that changes it (`totem providers`, the page's settings).

Loading the merged configuration for a run is `settings.config.load_config`; this module
is for editing the user's own file, which it keeps as a plain mapping so that what the
person wrote (comments aside) survives a change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["providers_in", "read_user_config", "user_config_path", "write_user_config"]


def user_config_path() -> Path:
    from totem.settings.paths import config_dir

    return config_dir() / "config.yaml"


def read_user_config() -> dict[str, Any]:
    """The user configuration as a mapping ({} when there is none); ConfigError when it
    cannot be read."""
    import yaml

    from totem.settings.config import ConfigError

    path = user_config_path()
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: cannot be read as YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of settings")
    return data


def write_user_config(data: dict[str, Any]) -> Path:
    """Replace the user configuration with `data`, atomically; the previous file is kept
    as `config.yaml.bak`."""
    import os
    import tempfile

    import yaml

    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file():
        path.with_name(path.name + ".bak").write_bytes(path.read_bytes())
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)
    fd, tmp = tempfile.mkstemp(prefix=".config-", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, path)
    return path


def providers_in(path: Path) -> dict[str, Any]:
    """The `providers` mapping of one configuration file; {} when it has none or is
    unreadable (used to say where a provider is defined)."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}
    found = data.get("providers") if isinstance(data, dict) else None
    return found if isinstance(found, dict) else {}
