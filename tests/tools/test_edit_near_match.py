"""An edit whose old_string is a near miss of the file's text: taken only when it points
at one place (read's line numbers copied along, indentation or spaces changed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tool_calls import Call
from totem.tools.base import ToolContext, ToolError
from totem.tools.edit import Edit

SOURCE = "def double(x):\n    return 2 * x\n\n\ndef mean(values):\n    return sum(values)\n"


def test_line_numbers_copied_from_read_are_left_out(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "m.py").write_text(SOURCE)
    # what the real 1.5B model sends after a read: the numbered lines as shown
    call(Edit(), ctx, path="m.py", old_string="     2\t    return 2 * x",
         new_string="     2\t    return x + x")
    assert (project / "m.py").read_text() == SOURCE.replace("2 * x", "x + x")


def test_lines_with_other_indentation_match_and_keep_the_files(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "m.py").write_text(SOURCE)
    call(Edit(), ctx, path="m.py", old_string="def mean(values):\nreturn sum(values)",
         new_string="def mean(values):\n    return sum(values) / len(values)")
    assert (project / "m.py").read_text() == SOURCE.replace(
        "sum(values)\n", "sum(values) / len(values)\n")


def test_a_near_miss_found_twice_is_still_an_error(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "m.py").write_text("if a:\n    go()\nif b:\n        go()\n")
    with pytest.raises(ToolError, match="old_string was not found"):
        call(Edit(), ctx, path="m.py", old_string="\tgo()", new_string="stop()")
    assert (project / "m.py").read_text() == "if a:\n    go()\nif b:\n        go()\n"


def test_text_that_is_nowhere_is_an_error(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match="old_string was not found"):
        call(Edit(), ctx, path="m.py", old_string="     9\treturn 3 * x", new_string="y")


def test_a_new_function_named_by_its_first_line_is_added_at_the_end(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "m.py").write_text(SOURCE)
    # the real 1.5B model's edit for "Add a function clamp(value, low, high) to m.py"
    result = call(Edit(), ctx, path="m.py", old_string="def clamp(value, low, high):",
                  new_string="def clamp(value, low, high):\n    return max(low, min(value, high))")
    assert result.output.startswith("[old_string was not in m.py; new_string begins with it")
    assert (project / "m.py").read_text() == (
        SOURCE + "\n\ndef clamp(value, low, high):\n    return max(low, min(value, high))\n")


def test_an_empty_old_string_adds_at_the_end(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / ".gitignore").write_text("__pycache__/\n.venv/\ndist/")
    # the real 1.5B model's call for "Add *.log as a new last line of .gitignore."
    result = call(Edit(), ctx, path=".gitignore", old_string="", new_string="\n*.log")
    assert result.output.startswith("[old_string was empty, so new_string was added at the end")
    assert (project / ".gitignore").read_text() == "__pycache__/\n.venv/\ndist/\n*.log\n"


def test_an_edit_that_empties_a_file_says_so_and_suggests_no_deletion(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "old_notes.txt").write_text("draft ideas from 2019")
    # the real 1.5B model's first try at "Delete the file old_notes.txt"; totem never
    # suggests a deletion the model did not ask for (issue 24), so it only says what happened
    result = call(Edit(), ctx, path="old_notes.txt", old_string="draft ideas from 2019",
                  new_string="")
    assert result.output.endswith("old_notes.txt is now empty.")
    assert "rm" not in result.output and (project / "old_notes.txt").exists()


def test_text_in_another_file_is_pointed_at(project: Path, ctx: ToolContext, call: Call) -> None:
    (project / "app.py").write_text("from messages import GREETING\nprint(GREETING)\n")
    (project / "messages.py").write_text("GREETING = 'Helo, {name}!'\n")
    # the real 1.5B model edited the file that uses the text, three times
    with pytest.raises(ToolError, match=r"It is in messages.py: to change it there, call edit"):
        call(Edit(), ctx, path="app.py", old_string="GREETING = 'Helo, {name}!'",
             new_string="GREETING = 'Hello, {name}!'")


def test_an_edit_may_not_break_a_python_file(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    source = "import re\n\n\ndef slugify(title):\n    words = re.findall(r'\\w+', title)\n"
    (project / "slug.py").write_text(source)
    old = "words = re.findall(r'\\w+', title)"
    # the real 1.5B model's edit: two assignments joined by `and`
    new = f"{old} and {old}"
    with pytest.raises(ToolError, match=r"would make slug.py invalid Python \(line 5: Syntax"):
        call(Edit(), ctx, path="slug.py", old_string=old, new_string=new)
    assert (project / "slug.py").read_text() == source


def test_a_refused_python_edit_shows_the_line_it_would_leave_and_offers_a_whole_write(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    source = "def summary(rows):\n    return json.dumps({'count': len(rows)})\n"
    (project / "report.py").write_text(source)
    # the real 1.5B model's fix of "name 'json' is not defined", sent three times alike
    old = "json.dumps({'count': len(rows)})"
    with pytest.raises(ToolError) as refused:
        call(Edit(), ctx, path="report.py", old_string=old, new_string=f"import json; {old}")
    said = str(refused.value)
    assert "line 2 would read: return import json; json.dumps" in said
    assert said.endswith("Or call write with the whole new content of report.py.")
    assert (project / "report.py").read_text() == source


def test_text_found_twice_lists_each_place_as_an_old_string_found_once(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "app.ini").write_text("[database]\nhost = db.internal\ntimeout = 30\n\n"
                                     "[cache]\nhost = cache.internal\ntimeout = 30\n")
    # the real 1.5B model sent this three times for "Set the database timeout to 45"
    with pytest.raises(ToolError) as raised:
        call(Edit(), ctx, path="app.ini", old_string="timeout = 30", new_string="timeout = 45")
    assert str(raised.value).endswith(
        'Each place, as an old_string found once: '
        'line 3 (in [database]): "host = db.internal\\ntimeout = 30"; '
        'line 7 (in [cache]): "host = cache.internal\\ntimeout = 30"')


def test_text_that_is_nowhere_and_names_no_new_piece_is_an_error(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "package.json").write_text('{"version": "1.4.2"}\n')
    # the real 0.5B model's edit for "Bump the version in package.json to 1.5.0"
    with pytest.raises(ToolError, match="old_string was not found"):
        call(Edit(), ctx, path="package.json", old_string="package.json",
             new_string="package.json\nversion = 1.5.0")
    assert (project / "package.json").read_text() == '{"version": "1.4.2"}\n'


PACKAGE = '{\n  "name": "lantern",\n  "version": "1.4.2",\n  "private": "1.4.2x"\n}\n'


def test_a_line_without_its_quotes_changes_the_value_in_the_real_line(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    """The real 0.5B, asked to bump package.json's version: `version: 1.4.2`."""
    (project / "package.json").write_text(PACKAGE)

    call(Edit(), ctx, path="package.json", old_string="version: 1.4.2",
         new_string="version: 1.5.0")
    assert (project / "package.json").read_text() == PACKAGE.replace(
        '"version": "1.4.2"', '"version": "1.5.0"')
    (project / "c.yaml").write_text("server:\n  port: 8080\nother:\n  port: 8081\n")
    call(Edit(), ctx, path="c.yaml", old_string="port:8080", new_string="port: 9090")
    assert (project / "c.yaml").read_text() == "server:\n  port: 9090\nother:\n  port: 8081\n"


def test_without_quotes_only_one_line_is_taken(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "twice.ini").write_text("[a]\nretries = 3\n[b]\nretries = 3\n")

    with pytest.raises(ToolError):
        call(Edit(), ctx, path="twice.ini", old_string="retries=3", new_string="retries=5")
    assert (project / "twice.ini").read_text() == "[a]\nretries = 3\n[b]\nretries = 3\n"


def test_a_addition_already_in_the_file_is_refused(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    """The real 1.5B, its typo fixed, appended the fixed line again, with read's number."""
    text = "# Courier\n\nEach depot will receive a manifest.\nmax = 10\n"
    (project / "README.md").write_text(text)

    with pytest.raises(ToolError, match=r"already has that text \(line 3\)"):
        call(Edit(), ctx, path="README.md", old_string="",
             new_string="     3    Each depot will receive a manifest.")
    assert (project / "README.md").read_text() == text
    call(Edit(), ctx, path="README.md", old_string="", new_string="x = 1")  # not a line
    assert (project / "README.md").read_text() == text + "x = 1\n"


def test_a_line_found_whole_once_is_taken_though_it_is_in_another(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    text = "# Notes\n\nJam is sweet.\n    Jam is sweet.\n"
    (project / "notes.md").write_text(text)
    call(Edit(), ctx, path="notes.md", old_string="Jam is sweet.", new_string="Tea.")
    assert (project / "notes.md").read_text() == "# Notes\n\nTea.\n    Jam is sweet.\n"
