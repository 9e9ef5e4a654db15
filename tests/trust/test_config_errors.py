"""Config errors are errors: an unknown key (at any level of the schema) or a value of the
wrong type stops `totem` with exit 2, naming the file, the key's path and the nearest key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from totem.mcp.config import load_mcp_config
from totem.settings.config import ConfigError, load_config

TOTEM = [sys.executable, "-m", "totem"]


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.delenv("TOTEM_CONFIG", raising=False)
    (tmp_path / "project" / ".totem").mkdir(parents=True)
    return tmp_path


def user_config(tmp: Path, text: str) -> Path:
    path = tmp / "xdg_config_home" / "totem" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def totem_run(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TOTEM, "run", *args, "hello"], cwd=tmp / "project",
                          env=dict(os.environ), text=True, capture_output=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def test_max_steps_is_an_error_that_suggests_maxsteps(folders: Path) -> None:
    path = user_config(folders, "max_steps: 1\n")
    done = totem_run(folders)
    assert done.returncode == 2
    assert f"{path}: max_steps: unknown key 'max_steps' (did you mean 'maxsteps'?)" in done.stderr


@pytest.mark.parametrize(("text", "where", "near"), [
    ("providers:\n  local: {kind: openai, base-url: 'http://x/v1'}\n",
     "providers.local.base-url", "base_url"),
    ("permission:\n  - {permission: bash, pattern: '*', acton: deny}\n",
     "permission.0.acton", "action"),
    ("tools:\n  bash: {timout: 5}\n", "tools.bash.timout", "timeout"),
    ("mcp:\n  notes: {comand: notes-server}\n", "mcp.notes.comand", "command"),
    ("detect: {port: {llamacpp: 8080}}\n", "detect.port", "ports"),
    ("forgepage: 3\n", "forgepage", "forgepages"),
])
def test_unknown_keys_at_every_level_name_the_path_and_the_nearest_key(
    folders: Path, text: str, where: str, near: str
) -> None:
    path = user_config(folders, text)
    with pytest.raises(ConfigError) as caught:
        load_config(folders / "project")
    assert f"{path}: {where}: unknown key" in str(caught.value)
    assert f"did you mean '{near}'?" in str(caught.value)


def test_a_wrong_type_is_an_error(folders: Path) -> None:
    user_config(folders, 'maxsteps: "ten"\ntools:\n  bash: {forbidden: "rm *"}\n')
    done = totem_run(folders)
    assert done.returncode == 2
    assert "maxsteps: expected a whole number, not text ('ten')" in done.stderr
    assert "tools.bash.forbidden: expected a list, not text" in done.stderr


def test_the_project_file_and_totem_config_are_checked_too(
    folders: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = folders / "project" / ".totem" / "config.yaml"
    project.write_text("modle: a/b\n")  # an untrusted folder: still read, still checked
    done = totem_run(folders)
    assert done.returncode == 2
    assert f"{project}: modle: unknown key 'modle' (did you mean 'model'?)" in done.stderr
    project.unlink()
    extra = folders / "extra.yaml"
    extra.write_text("providers:\n  p: {kind: openai, base_url: 'http://x/v1', keys: k}\n")
    # set through monkeypatch, which takes it away after the test (the fixture's delenv of a
    # variable that was not set records nothing to restore)
    monkeypatch.setenv("TOTEM_CONFIG", str(extra))
    done = totem_run(folders)
    assert done.returncode == 2 and f"{extra}: providers.p.keys" in done.stderr
    assert "did you mean 'key'?" in done.stderr


def test_an_unknown_key_in_mcp_json_is_an_error(folders: Path) -> None:
    path = folders / "project" / ".totem" / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"x": {"command": "x", "arg": ["a"]}}}))
    expected = r"mcpServers\.x\.arg: unknown key 'arg' \(did you mean 'args'\?\)"
    with pytest.raises(ConfigError, match=expected):
        load_mcp_config(folders / "project")
    done = totem_run(folders)
    assert done.returncode == 2 and "did you mean 'args'?" in done.stderr


def test_a_yaml_syntax_error_names_the_file_and_the_line(folders: Path) -> None:
    path = user_config(folders, "model: a/b\nproviders:\n  local: {kind: openai\nmaxsteps: 3\n")
    done = totem_run(folders)
    assert done.returncode == 2
    assert str(path) in done.stderr and "line 4" in done.stderr


def test_known_keys_and_forms_still_load(folders: Path) -> None:
    user_config(folders, (
        "model: local/m\nmaxsteps: 9\n"
        "providers:\n  local: {kind: openai, base_url: 'http://x/v1', key: '${env:K}',"
        " options: {headers: {X: y}}, models: {m: {context: 8000}}}\n"
        "permission:\n  edit: {'*': ask, 'docs/**': allow}\n"
        "tools:\n  bash: {timeout: 30, forbidden: ['git push *']}\n  output_limit: 9000\n"
        "  websearch: {url: 'http://127.0.0.1:8888'}\n"
        "detect: {ports: {ollama: 11434}}\ntotaljs: no\nforge: false\n"
        "mcp:\n  notes: {url: 'http://127.0.0.1:5/mcp', enabled: false}\n"))
    config = load_config(folders / "project")
    assert config.max_steps == 9 and config.tools.bash_timeout == 30
    assert config.knowledge.totaljs == "never"
