"""The `snapshots:` settings as a config file gives them."""

from __future__ import annotations

from pathlib import Path

import pytest

from totem.settings.config import ConfigError, load_config


def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "totem.yaml").write_text(text)
    monkeypatch.setenv("TOTEM_CONFIG", str(tmp_path / "totem.yaml"))
    project = tmp_path / "project"
    project.mkdir()
    return project


def test_snapshots_are_on_by_default_with_their_limits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = load_config(_config(tmp_path, monkeypatch, "maxsteps: 5\n")).tools.snapshots
    assert settings.enabled and settings.keep_days == 30
    assert settings.max_file_size == 20 * 2**20 and settings.max_store_size == 2048 * 2**20


def test_the_limits_are_read_and_false_turns_them_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = _config(tmp_path, monkeypatch,
                      "snapshots: {keep_days: 7, max_store_mb: 100, max_file_mb: 0.5}\n")
    settings = load_config(project).tools.snapshots
    assert (settings.keep_days, settings.max_store_size, settings.max_file_size) == (
        7, 100 * 2**20, 2**19)
    (tmp_path / "totem.yaml").write_text("snapshots: false\n")
    assert not load_config(project).tools.snapshots.enabled


def test_a_misspelt_key_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = _config(tmp_path, monkeypatch, "snapshots: {keep_day: 7}\n")
    with pytest.raises(ConfigError, match="keep_day"):
        load_config(project)
