"""Commands: `.totem/commands/<name>.md` becomes `/name args`, with `$ARGUMENTS` replaced."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.project_files import write_file
from totem.session.commands import Command, Expansion, complete, expand, load_commands


def write_command(root: Path, filename: str, text: str) -> Path:
    return write_file(root / ".totem" / "commands" / filename, text)


def command(name: str, prompt: str) -> Command:
    return Command(name, "", prompt, Path(f"{name}.md"))


def test_load_commands(root: Path) -> None:
    review = write_command(
        root, "review.md", "---\ndescription: Review the change\n---\nReview $ARGUMENTS.\n"
    )
    write_command(root, "plain.md", "Explain the architecture of this project.\nIn detail.\n")
    commands = load_commands(root)
    assert commands["review"] == Command(
        "review", "Review the change", "Review $ARGUMENTS.", review
    )
    assert commands["plain"].description == "Explain the architecture of this project."
    assert commands["plain"].prompt.endswith("In detail.")


def test_no_folder_no_commands(root: Path) -> None:
    assert load_commands(root) == {}


def test_bad_command_files_are_reported(root: Path) -> None:
    write_command(root, "empty.md", "---\ndescription: nothing\n---\n")
    write_command(root, "broken.md", "---\ndescription: [x\n---\nbody\n")
    write_command(root, "two words.md", "body\n")
    write_command(root, "ok.md", "fine\n")
    problems: list[str] = []
    commands = load_commands(root, problems=problems)
    assert list(commands) == ["ok"]
    assert len(problems) == 3
    assert all("not loaded" in p for p in problems)
    assert any("two words.md" in p and "cannot be typed" in p for p in problems)


def test_arguments_replace_every_placeholder() -> None:
    commands = {"fix": command("fix", "Fix $ARGUMENTS. Then test $ARGUMENTS again.")}
    text = "/fix the login bug"
    assert expand(text, commands) == Expansion(
        name="fix",
        arguments="the login bug",
        shown=text,
        model_text="Fix the login bug. Then test the login bug again.",
    )


def test_without_arguments_the_placeholder_goes_away() -> None:
    expansion = expand("/fix", {"fix": command("fix", "Fix $ARGUMENTS.")})
    assert expansion is not None
    assert expansion.model_text == "Fix ." and expansion.arguments == ""


def test_arguments_without_a_placeholder_go_on_a_new_line() -> None:
    commands = {"review": command("review", "Review the staged change.")}
    expansion = expand("/review focus on errors", commands)
    assert expansion is not None
    assert expansion.model_text == "Review the staged change.\nfocus on errors"
    bare = expand("/review", commands)
    assert bare is not None and bare.model_text == "Review the staged change."


def test_multiline_arguments_are_kept() -> None:
    expansion = expand("/ask first line\nsecond line", {"ask": command("ask", "Q: $ARGUMENTS")})
    assert expansion is not None
    assert expansion.model_text == "Q: first line\nsecond line"


@pytest.mark.parametrize(
    "text",
    ["/unknown do it", "/usr/bin/env is missing", "/", "hello /fix", "/fixer", "plain text"],
)
def test_text_that_is_no_command_is_sent_as_it_is(text: str) -> None:
    assert expand(text, {"fix": command("fix", "Fix $ARGUMENTS")}) is None


def test_loaded_commands_expand(root: Path) -> None:
    write_command(root, "test.md", "---\ndescription: Run tests\n---\nRun the tests in $ARGUMENTS")
    expansion = expand("/test tests/unit", load_commands(root))
    assert expansion is not None and expansion.model_text == "Run the tests in tests/unit"


def test_complete() -> None:
    commands = {n: command(n, "p") for n in ("review", "refactor", "test")}
    assert complete("/re", commands) == ["/refactor", "/review"]
    assert complete("/", commands) == ["/refactor", "/review", "/test"]
    assert complete("/x", commands) == []
    assert complete("re", commands) == []
    assert complete("/review now", commands) == []
