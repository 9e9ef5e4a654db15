"""What "always" stores for a bash line: exactly the rules the question shows, narrow ones
(a command with its subcommand), and the exact command for one that deletes, moves, changes
permissions, downloads or runs code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tool_calls import Call, MakeContext
from totem.events import Event, PermissionAsked
from totem.policy.bash_rules import always_rules
from totem.policy.permission import PermissionDenied, PermissionService, Reply, Rule, evaluate
from totem.store.sqlite import SqliteStore
from totem.tools.bash import Bash


class Person:
    """Answers each question with the next reply of a list, and records the questions."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.asked: list[PermissionAsked] = []
        self.service: PermissionService | None = None

    def answer(self, event: Event) -> None:
        assert isinstance(event, PermissionAsked) and self.service is not None
        self.asked.append(event)
        self.service.reply(event.request_id, Reply(self.replies.pop(0)))  # type: ignore[arg-type]


def test_the_issue_example_stores_what_it_shows_and_rm_of_another_file_asks(
    project: Path, make_ctx: MakeContext, call: Call, tmp_path: Path
) -> None:
    for name in ("p2.txt", "other.txt"):
        (project / name).write_text("x")
    store = SqliteStore(tmp_path / "totem.db")
    person = Person(["always", "reject"])
    ctx = make_ctx()
    ctx.permission = person.service = PermissionService(
        rules=[], mode="interactive", project=str(project), memory=store, emit=person.answer
    )
    call(Bash(), ctx, command="ls | wc -l && rm -f p2.txt")
    shown = person.asked[0].always
    assert shown == ["ls *", "wc *", "rm -f p2.txt"]
    stored = store.remembered_rules(str(project))
    assert sorted(stored, key=lambda r: r.pattern) == sorted(
        (Rule("bash", pattern, "allow") for pattern in shown), key=lambda r: r.pattern
    )
    assert not (project / "p2.txt").exists()

    with pytest.raises(PermissionDenied):
        call(Bash(), ctx, command="rm -f other.txt")
    assert person.asked[1].patterns == ["rm -f other.txt"]
    assert (project / "other.txt").exists()
    call(Bash(), ctx, command="ls -la | wc -c")  # allowed by what was stored: no question
    assert len(person.asked) == 2

    # a new session of the same project reads the same rules back
    again = PermissionService(rules=[], mode="headless", project=str(project), memory=store)
    assert again.action_for("bash", "rm -f p2.txt") == "allow"
    assert again.action_for("bash", "rm -f other.txt") == "ask"
    assert again.action_for("bash", "rm -rf .") == "ask"


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("git status", "git status *"),
        ("git status --short", "git status *"),
        ("git log --oneline -5", "git log *"),
        ("npm run test -- --watch", "npm run test *"),
        ("npm test", "npm test *"),
        ("cargo build --release", "cargo build *"),
        ("ls -la", "ls *"),
        ("find . -name *.py", "find *"),
        ("pytest -q", "pytest *"),
        # delete, move, change permissions, download, run code: the exact command
        ("rm -f p2.txt", "rm -f p2.txt"),
        ("rm *.pyc", "rm [*].pyc"),
        ("mv a b", "mv a b"),
        ("cp a b", "cp a b"),
        ("chmod +x run.sh", "chmod +x run.sh"),
        ("chown me f", "chown me f"),
        ("dd if=/dev/zero of=f", "dd if=/dev/zero of=f"),
        ("curl -o x https://example.com", "curl -o x https://example.com"),
        ("wget https://example.com", "wget https://example.com"),
        ("python script.py", "python script.py"),
        ("node x.js", "node x.js"),
        ("sh -x run.sh", "sh -x run.sh"),
        ("xargs", "xargs"),
        ("./build.sh", "./build.sh"),
        ("/usr/bin/env", "/usr/bin/env"),
        ("find . -delete", "find . -delete"),
        ("find . -exec rm {} ;", "find . -exec rm {} ;"),
        ("git push origin main", "git push origin main"),
        ("git reset --hard", "git reset --hard"),
        ("git clean -fdx", "git clean -fdx"),
        ("git -c core.pager=sh status", "git -c core.pager=sh status"),
        ("npm install left-pad", "npm install left-pad"),
        ("pip install requests", "pip install requests"),
        ("go run .", "go run ."),
        ("kill -9 1", "kill -9 1"),
        ("sed -i s/a/b/ f", "sed -i s/a/b/ f"),
    ],
)
def test_the_rule_for_a_command(command: str, rule: str) -> None:
    assert always_rules([command]) == [rule]
    allow = [Rule("bash", rule, "allow")]
    assert evaluate(allow, "bash", command) == "allow"  # it allows what was asked


@pytest.mark.parametrize(
    ("asked", "other"),
    [
        ("rm -f p2.txt", "rm -f other.txt"),
        ("rm *.pyc", "rm a.pyc"),
        ("git push origin main", "git push --force origin main"),
        ("python script.py", "python -c import os"),
        ("npm run test", "npm run deploy"),
        ("git status", "git stash drop"),
    ],
)
def test_the_rule_does_not_allow_a_different_command(asked: str, other: str) -> None:
    allow = [Rule("bash", rule, "allow") for rule in always_rules([asked])]
    assert evaluate(allow, "bash", other) == "ask"


def test_a_command_run_by_xargs_is_not_remembered(
    project: Path, make_ctx: MakeContext, call: Call
) -> None:
    (project / "old.tmp").write_text("x")
    (project / "keep.txt").write_text("y")
    person = Person(["always", "reject"])
    ctx = make_ctx()
    ctx.permission = person.service = PermissionService(
        rules=[], mode="interactive", project=str(project), emit=person.answer
    )
    call(Bash(), ctx, command="ls *.tmp | xargs rm -f")
    assert person.asked[0].patterns == ["ls *.tmp", "rm -f"]
    assert person.asked[0].always == ["ls *"]
    assert not (project / "old.tmp").exists()
    with pytest.raises(PermissionDenied):
        call(Bash(), ctx, command="ls *.txt | xargs rm -f")
    assert person.asked[1].patterns == ["ls *.txt", "rm -f"]
    assert (project / "keep.txt").exists()


def test_when_nothing_can_be_remembered_the_question_says_so(
    project: Path, make_ctx: MakeContext, call: Call
) -> None:
    person = Person(["always"])
    ctx = make_ctx()
    ctx.permission = person.service = PermissionService(
        rules=[], mode="interactive", project=str(project), emit=person.answer
    )
    (project / "list.txt").write_text("made.txt\n")
    call(Bash(), ctx, command="xargs -a list.txt touch")
    assert person.asked[0].patterns == ["touch"] and person.asked[0].always == []
    assert (project / "made.txt").exists()
    assert ctx.permission.action_for("bash", "touch") == "ask"
