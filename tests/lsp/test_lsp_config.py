"""The `lsp:` table: the built-in servers, a language added by a line, bad values as clear
errors, what an untrusted project may say (turn servers off, never name one), and `roots`
(a loose script starts no server)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.support.language_servers import Edits, script_server
from totem.settings.config import load_config
from totem.settings.errors import ConfigError
from totem.settings.lsp import BUILT_IN, parse_lsp
from totem.tools.write import Write

LOGS = "import sys\nopen(sys.argv[0] + '.starts', 'a').write('start\\n')\nsys.exit(1)\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TOTEM_CONFIG", str(tmp_path / "user.yaml"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "user.yaml").write_text("lsp:\n  go: {command: [gopls], extensions: [go]}\n")
    root = tmp_path / "project"
    (root / ".totem").mkdir(parents=True)
    return root


def test_a_language_is_a_line_of_config_and_the_built_in_ones_stay(project: Path) -> None:
    lsp = load_config(project, trusted=True).lsp
    go = lsp.for_suffix(".go")
    assert go is not None and go.command == ("gopls",) and go.extensions == {".go"}
    python = lsp.for_suffix(".py")
    assert python is not None and python.command == ("basedpyright-langserver", "--stdio")
    assert lsp.for_suffix(".tsx") == BUILT_IN[1]


def test_bad_values_are_clear_errors() -> None:
    with pytest.raises(ConfigError, match=r"lsp\.go: a new language server needs a command"):
        parse_lsp({"go": {"extensions": [".go"]}})
    with pytest.raises(ConfigError, match=r"lsp\.python\.wait: expected a number of seconds"):
        parse_lsp({"python": {"wait": 0}})
    with pytest.raises(ConfigError, match=r"lsp\.go\.roots: expected file names"):
        parse_lsp({"go": {"command": "gopls", "extensions": [".go"], "roots": ["a/go.mod"]}})
    assert parse_lsp(False).for_suffix(".py") is None
    assert parse_lsp({"python": False}).for_suffix(".py") is None


def test_an_unknown_key_in_the_table_is_an_error(project: Path) -> None:
    (project.parent / "user.yaml").write_text("lsp:\n  go: {comand: [gopls]}\n")
    with pytest.raises(ConfigError, match="comand"):
        load_config(project, trusted=True)


def test_an_untrusted_project_may_turn_servers_off_but_not_name_one(project: Path) -> None:
    (project / ".totem" / "config.yaml").write_text(
        "lsp:\n  python: {command: [./evil-server], extensions: [.py]}\n"
        "  typescript: false\n  go: {enabled: false}\n")
    untrusted = load_config(project, trusted=False)
    python = untrusted.lsp.for_suffix(".py")
    assert python is not None and python.command == ("basedpyright-langserver", "--stdio")
    assert untrusted.lsp.for_suffix(".ts") is None and untrusted.lsp.for_suffix(".go") is None
    assert "lsp.python: runs the language server ./evil-server for its files" in (
        untrusted.ignored)
    trusted = load_config(project, trusted=True).lsp.for_suffix(".py")
    assert trusted is not None and trusted.command == ("./evil-server",)


def test_a_server_with_roots_checks_only_files_of_a_project_of_its_language(
        tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "notes").mkdir(parents=True)
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "marker.toml").write_text("")
    server = script_server(tmp_path, "logs", LOGS, roots=("marker.toml",))
    edits = Edits(root, server)
    log = Path(server.command[1] + ".starts")

    async def write(path: str) -> None:
        await edits.call(Write(), path=path, content="x\n")

    asyncio.run(write("notes/loose.logs"))
    asyncio.run(write("top.logs"))
    assert not log.exists() and edits.said() == []
    asyncio.run(write("pkg/sub/deep.logs"))
    assert log.read_text() == "start\nstart\n"  # started (and restarted once: it exits)
