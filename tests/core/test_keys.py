"""The key store: a real file under a tmp XDG_CONFIG_HOME, private, replaced atomically."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from totem.settings.keys import (
    KeyStoreError,
    delete_key,
    get_key,
    key_ref,
    keys_path,
    load_keys,
    mask,
    resolve_refs,
    set_key,
)

KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz-0123"


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))


def test_keys_are_stored_privately_and_read_back(tmp_path: Path) -> None:
    assert load_keys() == {} and get_key("a") is None
    path = set_key("anthropic", KEY)
    assert path == keys_path() == tmp_path / "cfg" / "totem" / "keys.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    set_key("groq", "gsk_0123456789abcdef")
    assert load_keys() == {"anthropic": KEY, "groq": "gsk_0123456789abcdef"}
    assert [p.name for p in path.parent.iterdir()] == ["keys.json"]  # no temporary left
    assert delete_key("groq") and not delete_key("groq")
    assert json.loads(path.read_text()) == {"anthropic": KEY}


def test_a_loose_folder_is_tightened(tmp_path: Path) -> None:
    folder = tmp_path / "cfg" / "totem"
    folder.mkdir(parents=True)
    os.chmod(folder, 0o755)
    set_key("x", KEY)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_references_resolve_and_name_what_is_missing() -> None:
    set_key("gw", KEY)
    assert key_ref("gw") == "${key:gw}"
    assert resolve_refs("${key:gw}") == (KEY, [])
    assert resolve_refs("Bearer ${key:gw} ${key:nope}") == (f"Bearer {KEY} ", ["nope"])
    assert resolve_refs("plain") == ("plain", [])
    with pytest.raises(ValueError):
        key_ref("a/b")


def test_bad_keys_and_bad_files_are_refused_without_showing_content() -> None:
    with pytest.raises(ValueError):
        set_key("a", " spaced ")
    with pytest.raises(ValueError):
        set_key("a", "")
    keys_path().parent.mkdir(parents=True, exist_ok=True)
    keys_path().write_text('{"a": "sk-secret-broken')
    with pytest.raises(KeyStoreError) as caught:
        load_keys()
    assert "sk-secret" not in str(caught.value)


def test_mask_shows_little() -> None:
    assert mask(KEY) == "sk-…0123"
    assert mask("gsk_0123456789") == "…6789"
    assert mask("short") == "…"
    assert mask(None) == "(none)"
