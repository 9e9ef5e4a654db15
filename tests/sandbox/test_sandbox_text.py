"""The sandbox's settings, lists and generated command lines, read as text: the Seatbelt
profile (macOS, which cannot run here), the bubblewrap line, the environment filter, the
config keys and what an untrusted project may do to them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from totem.sandbox.bwrap import bwrap_argv
from totem.sandbox.plan import SandboxPlan, make_plan
from totem.sandbox.seatbelt import quoted, seatbelt_argv, seatbelt_profile
from totem.sandbox.secrets import filtered_environment, hidden_places
from totem.settings.config import ConfigError, load_config
from totem.settings.sandbox import SandboxConfigError, SandboxSettings, parse_sandbox


def plan(tmp_path: Path, **more: object) -> SandboxPlan:
    root, temp = tmp_path / "project", tmp_path / "temp"
    (root / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    temp.mkdir(exist_ok=True)
    secret_dir, secret_file = tmp_path / "home" / ".ssh", tmp_path / "home" / ".netrc"
    secret_dir.mkdir(parents=True, exist_ok=True)
    secret_file.write_text("machine x password y\n")
    fields: dict[str, object] = dict(
        mode="workspace-write", root=root, temp=temp, hidden=(secret_dir, secret_file),
        protected=(root / ".git" / "hooks",), processes=300, writable=(root, temp))
    fields.update(more)
    return SandboxPlan(**fields)  # type: ignore[arg-type]


def test_the_seatbelt_profile_denies_by_default_and_narrows_each_allow(tmp_path: Path) -> None:
    profile = seatbelt_profile(plan(tmp_path))
    lines = profile.splitlines()
    assert lines[:2] == ["(version 1)", "(deny default)"]
    home = tmp_path / "home"
    read_all = lines.index("(allow file-read*)")
    hidden = next(i for i, line in enumerate(lines) if line.startswith("(deny file-read*"))
    assert read_all < hidden
    assert f'(subpath "{home}/.ssh")' in lines[hidden]
    assert f'(literal "{home}/.netrc")' in lines[hidden]
    write = next(i for i, line in enumerate(lines) if line.startswith("(allow file-write*"))
    assert f'(subpath "{tmp_path}/project")' in lines[write]
    assert f'(subpath "{tmp_path}/temp")' in lines[write]
    assert '(literal "/dev/null")' in lines[write]
    protect = next(i for i, line in enumerate(lines) if line.startswith("(deny file-write*"))
    assert protect > write and f'(subpath "{tmp_path}/project/.git/hooks")' in lines[protect]
    assert "network" not in profile  # denied by default: nothing allows it
    assert profile.count("(") == profile.count(")")


def test_the_seatbelt_profile_opens_the_network_only_for_listed_hosts(tmp_path: Path) -> None:
    opened = seatbelt_profile(plan(tmp_path, network=("pypi.org:443",)))
    assert "(allow network-outbound)" in opened


def test_seatbelt_strings_are_escaped(tmp_path: Path) -> None:
    assert quoted('/a "b"\\c') == '"/a \\"b\\"\\\\c"'
    odd = tmp_path / 'we"ird'
    odd.mkdir()
    profile = seatbelt_profile(plan(tmp_path, writable=(odd,)))
    assert f'(subpath "{tmp_path}/we\\"ird")' in profile


def test_the_seatbelt_command_sets_the_process_limit_first(tmp_path: Path) -> None:
    argv = seatbelt_argv(plan(tmp_path), ["/bin/bash", "-c", "make"])
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"]
    assert argv[3:] == ["/bin/bash", "-c", 'ulimit -u 300 && exec "$@"', "/bin/bash",
                        "/bin/bash", "-c", "make"]


def test_the_bwrap_line_binds_in_order(tmp_path: Path) -> None:
    argv = bwrap_argv(plan(tmp_path), ["/bin/bash", "-c", "true"])
    text = " ".join(argv)
    root = f"{tmp_path}/project"
    assert "--unshare-net" in argv and "--unshare-pid" in argv and "--die-with-parent" in argv
    assert text.index("--ro-bind / /") < text.index(f"--bind {root} {root}") < text.index(
        f"--ro-bind {root}/.git/hooks") < text.index(f"--tmpfs {tmp_path}/home/.ssh")
    assert f"--ro-bind /dev/null {tmp_path}/home/.netrc" in text
    assert "--unshare-net" not in bwrap_argv(plan(tmp_path, network=("a.b:1",)), ["true"])


def test_the_environment_filter_drops_secrets_only() -> None:
    env = {"OPENAI_API_KEY": "x", "GITHUB_TOKEN": "x", "AWS_PROFILE": "x", "my_db_password": "x",
           "SSH_AUTH_SOCK": "x", "GOOGLE_APPLICATION_CREDENTIALS": "x", "PATH": "/bin",
           "HOME": "/h", "LANG": "C", "TOKENIZERS_PARALLELISM": "false", "VIRTUAL_ENV": "/v"}
    assert filtered_environment(env) == {"PATH": "/bin", "HOME": "/h", "LANG": "C",
                                         "TOKENIZERS_PARALLELISM": "false", "VIRTUAL_ENV": "/v"}


def test_hidden_places_exist_and_never_hold_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".config" / "totem").mkdir(parents=True)
    (home / ".config" / "totem" / "keys.json").write_text("{}")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    (home / "work").mkdir()
    found = hidden_places(["~/work", "~/missing"], root=home / "work" / "p")
    assert found == [home / ".ssh", home / ".config" / "totem" / "keys.json"]


def test_sandbox_settings_parse_both_forms() -> None:
    assert parse_sandbox(None) == SandboxSettings()
    assert parse_sandbox(False).mode == "off"  # YAML's `sandbox: off`
    assert parse_sandbox("read-only").mode == "read-only"
    full = parse_sandbox({"mode": "workspace-write", "network": ["pypi.org:443"],
                          "hidden": ["~/.x"], "processes": 64})
    assert (full.network, full.hidden, full.processes) == (["pypi.org:443"], ["~/.x"], 64)
    for bad in ("on", {"network": ["pypi.org"]}, {"processes": 2}):
        with pytest.raises(SandboxConfigError):
            parse_sandbox(bad)


def _configs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user: str, project: str) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TOTEM_CONFIG", raising=False)
    (tmp_path / "config" / "totem").mkdir(parents=True)
    (tmp_path / "config" / "totem" / "config.yaml").write_text(user)
    root = tmp_path / "project"
    (root / ".totem").mkdir(parents=True)
    (root / ".totem" / "config.yaml").write_text(project)
    return root


def test_the_default_is_workspace_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _configs(tmp_path, monkeypatch, "", "")
    assert load_config(root).tools.sandbox.mode == "workspace-write"


def test_an_untrusted_project_only_narrows_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _configs(tmp_path, monkeypatch, "sandbox: {hidden: ['~/.mine']}\n",
                    "sandbox: {mode: off, network: ['evil.example:443'], hidden: ['~/.x']}\n")
    config = load_config(root)
    assert config.tools.sandbox.mode == "workspace-write"
    assert config.tools.sandbox.network == []
    assert config.tools.sandbox.hidden == ["~/.mine", "~/.x"]
    assert "sandbox: off (wider than workspace-write)" in config.ignored
    assert any("would open the network" in line for line in config.ignored)
    (root / ".totem" / "config.yaml").write_text("sandbox: read-only\n")
    assert load_config(root).tools.sandbox.mode == "read-only"  # narrower: kept
    trusted = load_config(root, trusted=True)
    assert trusted.tools.sandbox.mode == "read-only"
    (root / ".totem" / "config.yaml").write_text("sandbox: off\n")
    assert load_config(root, trusted=True).tools.sandbox.mode == "off"  # trusted: it may


def test_a_trusted_project_never_uncovers_what_the_user_hides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _configs(tmp_path, monkeypatch, "sandbox: {hidden: ['~/.mine']}\n",
                    "sandbox: {hidden: []}\n")
    assert load_config(root, trusted=True).tools.sandbox.hidden == ["~/.mine"]


def test_unknown_sandbox_keys_and_modes_are_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _configs(tmp_path, monkeypatch, "sandbox: {mode: read-only, netwrk: []}\n", "")
    with pytest.raises(ConfigError, match="did you mean 'network'"):
        load_config(root)
    (tmp_path / "config" / "totem" / "config.yaml").write_text("sandbox: strict\n")
    with pytest.raises(ConfigError, match="read-only, workspace-write or off"):
        load_config(root)


def test_a_plan_protects_git_hooks_and_config_only_when_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "p"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("")
    made = make_plan(SandboxSettings(), root)
    assert set(made.protected) == {root / ".git" / "hooks", root / ".git" / "config"}
    assert made.writable[0] == root and os.path.isdir(made.temp)
    read_only = make_plan(SandboxSettings(mode="read-only"), root)
    assert read_only.writable == (read_only.temp,) and read_only.protected == ()


def test_a_repository_without_hooks_gets_a_read_only_hooks_folder(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    made = make_plan(SandboxSettings(), root)
    assert root / ".git" / "hooks" in made.protected


def test_root_s_commands_enter_the_pids_cgroup_before_bwrap(tmp_path: Path) -> None:
    """The shell moves itself into the cgroup, then execs bwrap: everything bwrap starts is
    counted there (its own pid stays the process group's, so a stop still reaches it)."""
    from totem.sandbox.backend import Availability, wrap
    from totem.sandbox.pids import entering

    cgroup = tmp_path / "totem-1-24"
    plan = SandboxPlan(mode="workspace-write", root=tmp_path, temp=tmp_path,
                       writable=(tmp_path,), pids_cgroup=cgroup)
    argv = wrap(plan, ["/bin/bash", "-c", "true"], Availability("bwrap", "/usr/bin/bwrap"))
    assert argv[:4] == ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"',
                        str(cgroup)]
    assert argv[4] == "/usr/bin/bwrap" and argv == entering(cgroup, argv[4:])
    plan_without = SandboxPlan(mode="workspace-write", root=tmp_path, temp=tmp_path)
    assert wrap(plan_without, ["true"], Availability("bwrap", "bwrap"))[0] == "bwrap"
