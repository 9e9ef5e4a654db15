"""which folders are Total.js projects, under totaljs: auto, always and never."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from totem.knowledge import active_pack
from totem.knowledge.totaljs import TOTALJS
from totem.settings.config import ConfigError, KnowledgeSettings, load_config

AUTO = KnowledgeSettings()


def folder(tmp: Path, files: dict[str, str]) -> Path:
    root = tmp / "project"
    root.mkdir()
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def package(deps: dict[str, str], key: str = "dependencies") -> str:
    return json.dumps({"name": "app", key: deps})


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({}, True),  # a new, empty folder
        ({"README.md": "# notes", ".gitignore": "node_modules"}, True),
        ({".totem/config.yaml": "maxsteps: 9\n"}, True),
        ({"package.json": package({"total5": "latest"})}, True),
        ({"package.json": package({"total5": "^0.0.9"}, "devDependencies")}, True),
        ({"package.json": package({"express": "^4"})}, False),
        ({"package.json": package({"total4": "^0.0.80"})}, False),
        ({"package.json": "{ not json"}, False),
        ({"pom.xml": "<project/>"}, False),
        ({"Cargo.toml": "[package]"}, False),
        ({"go.mod": "module x"}, False),
        ({"pyproject.toml": "[project]"}, False),
        ({"setup.py": ""}, False),
        ({"Gemfile": ""}, False),
        ({"composer.json": "{}"}, False),
        ({"App.csproj": "<Project/>"}, False),
        ({"app.py": "print(1)"}, False),
        ({"main.go": "package main"}, False),
    ],
)
def test_auto_detection_by_kind_of_folder(tmp_path: Path, files: dict[str, str],
                                          expected: bool) -> None:
    root = folder(tmp_path, files)
    assert TOTALJS.detect(root, AUTO) is expected
    assert (active_pack(root, AUTO) is TOTALJS) is expected


def test_always_and_never_decide_for_every_folder(tmp_path: Path) -> None:
    python = folder(tmp_path, {"pyproject.toml": "[project]"})
    assert TOTALJS.detect(python, KnowledgeSettings(totaljs="always"))
    (python / "package.json").write_text(package({"total5": "1"}))
    assert not TOTALJS.detect(python, KnowledgeSettings(totaljs="never"))


def test_the_settings_come_from_the_config_files(tmp_path: Path) -> None:
    root = folder(tmp_path, {".totem/config.yaml": (
        "totaljs: never\nforge: false\nforgepages: 3\nforgechars: 900\nconventions: false\n")})
    settings = load_config(root).knowledge
    assert settings == KnowledgeSettings("never", False, 3, 900, False)
    assert load_config(tmp_path).knowledge == KnowledgeSettings()
    (root / ".totem/config.yaml").write_text("totaljs: sometimes\n")
    with pytest.raises(ConfigError, match="totaljs"):
        load_config(root)
    (root / ".totem/config.yaml").write_text("forgepages: -1\n")
    with pytest.raises(ConfigError, match="forgepages"):
        load_config(root)


def test_sources_one_folder_down_make_another_kind_of_project(tmp_path: Path) -> None:
    from totem.knowledge.totaljs.detect import is_new_folder

    (tmp_path / "README.md").write_text("# x\n")
    assert is_new_folder(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print(1)\n")
    assert not is_new_folder(tmp_path)


def test_the_knowledge_section_wins_and_old_keys_still_count_with_a_notice(
    tmp_path: Path,
) -> None:
    root = folder(tmp_path, {".totem/config.yaml": (
        "knowledge: {totaljs: never, forge: false, forgepages: 3, forgechars: 900, "
        "conventions: false}\n")})
    config = load_config(root)
    assert config.knowledge == KnowledgeSettings("never", False, 3, 900, False)
    assert config.notices == []
    (root / ".totem/config.yaml").write_text("forge: false\nknowledge: {forgepages: 1}\n")
    config = load_config(root)
    assert (config.knowledge.forge, config.knowledge.forgepages) == (False, 1)
    assert len(config.notices) == 1 and "forge" in config.notices[0]
    assert "knowledge:" in config.notices[0]
    (root / ".totem/config.yaml").write_text("knowledge: [totaljs]\n")
    with pytest.raises(ConfigError, match="knowledge"):
        load_config(root)
