"""The key store: API keys typed into totem, kept outside every project.

    ~/.config/totem/keys.json      (XDG_CONFIG_HOME) mode 0600, its folder 0700

The configuration refers to a stored key as `key: "${key:NAME}"`; `resolve_refs` replaces
such references with the keys. A key is never printed (`mask` shows `sk-…abcd` at most),
never logged, never written anywhere else. The file is replaced atomically, so a reader
sees the old keys or the new ones, never half a file.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from totem.settings.paths import config_dir

__all__ = ["KEY_REF", "KeyStoreError", "delete_key", "get_key", "key_ref", "keys_path",
           "load_keys", "mask", "resolve_refs", "set_key"]

KEY_REF = re.compile(r"\$\{key:([A-Za-z0-9_.\-]+)\}")
_NAME = re.compile(r"[A-Za-z0-9_.\-]+")


class KeyStoreError(Exception):
    pass


def keys_path() -> Path:
    return config_dir() / "keys.json"


def key_ref(name: str) -> str:
    """The reference to the stored key `name`, as written in the configuration."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"a key name may hold letters, digits, '_', '.' and '-': {name!r}")
    return "${key:" + name + "}"


def load_keys() -> dict[str, str]:
    """Every stored key by name; {} when there is no key file."""
    path = keys_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        # The message names the file, never its content.
        raise KeyStoreError(f"{path}: cannot be read ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise KeyStoreError(f"{path}: expected a mapping of names to keys")
    return {str(k): str(v) for k, v in data.items() if isinstance(v, str)}


def get_key(name: str) -> str | None:
    return load_keys().get(name)


def set_key(name: str, value: str) -> Path:
    """Store `value` as the key `name` (replacing an older one); return the file's path."""
    key_ref(name)  # checks the name
    if not value or value != value.strip() or "\n" in value:
        raise ValueError("a key must be one line without surrounding spaces")
    keys = load_keys()
    keys[name] = value
    return _write(keys)


def delete_key(name: str) -> bool:
    """Forget the key `name`; False when there was none."""
    keys = load_keys()
    if name not in keys:
        return False
    del keys[name]
    _write(keys)
    return True


def _write(keys: dict[str, str]) -> Path:
    path = keys_path()
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    fd, tmp = tempfile.mkstemp(prefix=".keys-", suffix=".tmp", dir=folder)  # created 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), 0o600)
            json.dump(keys, out, indent=1, sort_keys=True)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def resolve_refs(text: str) -> tuple[str, list[str]]:
    """`text` with every `${key:NAME}` replaced by the stored key, and the names not found.

    The key file is read only when `text` holds a reference.
    """
    if "${key:" not in text:
        return text, []
    keys = load_keys()
    missing: list[str] = []

    def sub(match: re.Match[str]) -> str:
        value = keys.get(match.group(1))
        if value is None:
            missing.append(match.group(1))
            return ""
        return value

    return KEY_REF.sub(sub, text), missing


def mask(key: str | None) -> str:
    """What may be shown of a key: `sk-…abcd` for a long one, `…` for a short one."""
    if not key:
        return "(none)"
    if len(key) < 12:
        return "…"
    head = key[:3] if len(key) >= 20 else ""
    return f"{head}…{key[-4:]}"

