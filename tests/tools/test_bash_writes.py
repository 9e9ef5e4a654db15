"""Redirects, `tee` and substitutions through the real bash tool, with the permission rules of
the README's "Configuration" section loaded as a project's config: a file outside the project
is never written without a rule, a file inside is an edit, a substitution is a command."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.tool_calls import Call, MakeContext
from totem.events import Event, PermissionAsked
from totem.policy.permission import PermissionDenied, PermissionService, Reply, Rule
from totem.policy.shell_writes import WriteTarget, write_targets
from totem.settings.config import load_config
from totem.tools.base import ToolContext
from totem.tools.bash import Bash
from totem.tools.process import ProcessTool

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_rules(project: Path) -> list[Rule]:
    """The README's example config, as the project's `.totem/config.yaml` (a trusted one)."""
    text = README.read_text()
    section = text[text.index("## Configuration") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    (project / ".totem").mkdir(exist_ok=True)
    (project / ".totem" / "config.yaml").write_text(block.group(1))
    rules = load_config(project, trusted=True).rules
    assert Rule("bash", "git status*", "allow") in rules
    return rules


@pytest.fixture(autouse=True)
def _own_config_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TOTEM_CONFIG", raising=False)


@pytest.fixture
def repo(project: Path) -> Iterator[Path]:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    yield project


class Asker:
    """A person at the terminal: records each question and gives the same reply to all."""

    def __init__(self, ctx: ToolContext, reply: str, extra: list[Rule]) -> None:
        self.asked: list[PermissionAsked] = []
        self.reply = reply
        rules = [*readme_rules(ctx.root), *extra]
        ctx.permission = PermissionService(
            rules=rules, mode="interactive", project=str(ctx.root), emit=self.answer
        )
        self.ctx = ctx

    def answer(self, event: Event) -> None:
        assert isinstance(event, PermissionAsked)
        self.asked.append(event)
        self.ctx.permission.reply(event.request_id, Reply(self.reply))  # type: ignore[arg-type]


def headless(make_ctx: MakeContext, project: Path, *extra: Rule) -> ToolContext:
    return make_ctx(mode="headless", rules=[*readme_rules(project), *extra])


OUTSIDE_FORMS = [
    "git status > ../outside.txt",
    "git status >> ../outside.txt",
    "git status 2> ../outside.txt",
    "git status &> ../outside.txt",
    "git status >| ../outside.txt",
    "git status >& ../outside.txt",
    "git status 1>>'../outside.txt'",
    'git status > "../outside.txt"',
    "git status | tee ../outside.txt",
    "git status | tee -a ../outside.txt",
    "git status 2>&1 | tee -a /dev/null ../outside.txt",
    "git status > $PWD/../outside.txt",
    "cd .. && git status > outside.txt",
    "bash -c 'git status > ../outside.txt'",
    "git status $(git status > ../outside.txt)",
    "cat <<EOF > ../outside.txt\nhello\nEOF",
    "git status > >(tee ../outside.txt)",
]


@pytest.mark.parametrize("line", OUTSIDE_FORMS)
def test_a_write_outside_is_refused_without_asking_and_nothing_is_written(
    line: str, repo: Path, make_ctx: MakeContext, call: Call
) -> None:
    with pytest.raises(PermissionDenied) as denied:
        call(Bash(), headless(make_ctx, repo), command=line)
    assert "external_directory" in denied.value.message
    person = Asker(make_ctx(), "once", [])
    with pytest.raises(PermissionDenied):
        call(Bash(), person.ctx, command=line)
    assert person.asked == []
    assert not (repo.parent / "outside.txt").exists()


def test_the_same_command_without_the_redirect_runs(
    repo: Path, make_ctx: MakeContext, call: Call
) -> None:
    out = call(Bash(), headless(make_ctx, repo), command="git status > /dev/null 2>&1; git status")
    assert "Exit code: 0" in out.output


def test_a_rule_for_the_outside_folder_lets_the_write_through(
    repo: Path, make_ctx: MakeContext, call: Call
) -> None:
    allowed = Rule("external_directory", str(repo.parent.resolve() / "*"), "allow")
    call(Bash(), headless(make_ctx, repo, allowed), command="git status > ../outside.txt")
    assert "branch" in (repo.parent / "outside.txt").read_text()


def test_a_write_inside_is_an_edit_that_a_deny_rule_refuses(
    repo: Path, make_ctx: MakeContext, call: Call
) -> None:
    (repo / "locked").mkdir()
    deny = Rule("edit", "locked/*", "deny")
    for line in ("git status > locked/status.txt", "git status | tee locked/status.txt"):
        ctx = headless(make_ctx, repo, deny)
        with pytest.raises(PermissionDenied) as denied:
            call(Bash(), ctx, command=line)
        assert "edit: locked/status.txt" in denied.value.message
        person = Asker(make_ctx(), "once", [deny])
        with pytest.raises(PermissionDenied):
            call(Bash(), person.ctx, command=line)
        assert person.asked == []
    assert not (repo / "locked" / "status.txt").exists()


def test_a_write_inside_allowed_by_the_edit_rule_runs(
    repo: Path, make_ctx: MakeContext, call: Call
) -> None:
    (repo / "docs").mkdir()
    call(Bash(), headless(make_ctx, repo), command="git status > docs/status.txt")
    assert "branch" in (repo / "docs" / "status.txt").read_text()


def test_an_allowed_command_writing_a_file_asks_about_the_file(
    repo: Path, make_ctx: MakeContext, call: Call
) -> None:
    person = Asker(make_ctx(), "reject", [])
    with pytest.raises(PermissionDenied):
        call(Bash(), person.ctx, command="git status > notes.txt")
    assert [(e.permission, e.patterns) for e in person.asked] == [("edit", ["notes.txt"])]
    assert not (repo / "notes.txt").exists()
    with pytest.raises(PermissionDenied, match="nobody can answer"):
        call(Bash(), headless(make_ctx, repo), command="git status > notes.txt")


SUBSTITUTIONS = [
    "git status $(touch ../pwned)",
    'git status "$(touch ../pwned)"',
    "git status `touch ../pwned`",
    'git status "`touch ../pwned`"',
    "git status <(touch ../pwned)",
    "git status > >(touch ../pwned)",
    "git status ${X:-$(touch ../pwned)}",
    "git status $(( $(touch ../pwned) + 1 ))",
    "cat <<EOF\n$(touch ../pwned)\nEOF",
    "cat <<-EOF\n\t`touch ../pwned`\n\tEOF",
]


@pytest.mark.parametrize("line", SUBSTITUTIONS)
def test_a_substitution_is_a_command_asked_on_its_own(
    line: str, repo: Path, make_ctx: MakeContext, call: Call
) -> None:
    person = Asker(make_ctx(), "reject", [])
    with pytest.raises(PermissionDenied):
        call(Bash(), person.ctx, command=line)
    assert len(person.asked) == 1 and "touch ../pwned" in person.asked[0].patterns
    with pytest.raises(PermissionDenied):
        call(Bash(), headless(make_ctx, repo), command=line)
    assert not (repo.parent / "pwned").exists()


def test_a_quoted_heredoc_is_text_and_runs(repo: Path, make_ctx: MakeContext, call: Call) -> None:
    line = "cat <<'EOF' > docs/notes.md\n$(touch ../pwned) `rm -rf /`\nEOF"
    (repo / "docs").mkdir()
    rules = [Rule("bash", "cat *", "allow")]
    call(Bash(), headless(make_ctx, repo, *rules), command=line)
    assert (repo / "docs" / "notes.md").read_text() == "$(touch ../pwned) `rm -rf /`\n"
    assert not (repo.parent / "pwned").exists()


@pytest.mark.parametrize(
    ("line", "targets"),
    [
        ("ls > a 2>&1 >> b 2> c &> d >| e", ["a", "b", "c", "d", "e"]),
        ("ls 2>&1 >&2 <&- < in.txt <<< word", []),
        ("ls | tee -a --output-error=warn x y -- -z", ["x", "y", "-z"]),
        ("sudo tee /etc/hosts", ["/etc/hosts"]),
        ("for f in *; do echo $f; done > list.txt", ["list.txt"]),
        ("cd sub && ls > a && cd - && ls > b", ["a", "b"]),
    ],
)
def test_write_targets(line: str, targets: list[str]) -> None:
    assert [t.path for t in write_targets(line)] == targets


def test_cd_is_followed_and_cd_minus_is_unknown() -> None:
    found = write_targets("cd sub && ls > a && cd - && ls > b")
    assert found == [WriteTarget("a", ("sub",)), WriteTarget("b", None)]


def test_an_unknowable_target_is_treated_as_outside(
    repo: Path, make_ctx: MakeContext, call: Call
) -> None:
    with pytest.raises(PermissionDenied, match="external_directory"):
        call(Bash(), headless(make_ctx, repo), command="git status > $OUT")


def test_a_background_process_is_checked_the_same_way(
    repo: Path, make_ctx: MakeContext, call: Call
) -> None:
    with pytest.raises(PermissionDenied, match="external_directory"):
        call(ProcessTool(), headless(make_ctx, repo), action="start",
             command="git status | tee -a ../outside.txt")
    assert not (repo.parent / "outside.txt").exists()
