"""The parts of the small-model help that need no model: the plan's check against the
project, the names a request mentions, and the guard that ends a degenerate answer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from totem.providers.base import StreamEnd, StreamEvent, TextChunk, ToolArgsChunk, ToolCallBegin
from totem.repeats import degenerate
from totem.run.callguard import CallGuard, guard_calls
from totem.smallmodel.plan import parse_plan, plan_schema
from totem.smallmodel.project import (
    ProjectFile,
    defined_names,
    distinctive,
    mentioned,
    named_files,
)
from totem.smallmodel.spelling import spelling_note
from totem.smallmodel.test_command import is_test_file, project_test_command


def test_a_plan_names_only_real_files_and_new_files_inside_the_project(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    paths = ["a.py"]
    answer = json.dumps({"files": ["a.py", "ghost.py"],
                         "new_files": ["NOTES.md", "a.py", "../outside.txt", "/etc/x"],
                         "removed": ["ghost.py", "a.py", "a.py"], "kind": "change"})
    plan = parse_plan(answer, tmp_path, paths)
    assert plan is not None and plan.files == ("a.py",) and plan.new_files == ("NOTES.md",)
    assert plan.removed == ("a.py",)  # a real file of the project, once
    assert parse_plan('{"answer": "hi"}', tmp_path, paths) is None
    assert parse_plan("not json", tmp_path, paths) is None
    schema = plan_schema(paths)
    assert schema["properties"]["files"]["items"] == {"enum": ["a.py"]}
    assert "removed" not in schema["properties"]  # asked only with the removals lever on
    assert plan_schema(paths, removed=True)["properties"]["removed"]["items"] == {
        "enum": ["a.py"]}
    assert plan_schema([])["properties"]["files"]["maxItems"] == 0


def test_what_a_request_names_is_found_in_any_wording() -> None:
    files = [ProjectFile("src/app.py", "def calc_ttl(x):\n    return x\n\nclass Ledger:\n"
                         "    pass\n\nMAX_RETRIES = 17\n"),
             ProjectFile("config.ini", "[server]\nport = 8437\n"),
             ProjectFile("docs/config.ini", "[docs]\n")]
    named = [f.path for f in named_files(files, "welcher Port steht in src/app.py?")]
    assert named == ["src/app.py"]
    # a name two files share is found only by its whole path
    assert [f.path for f in named_files(files, "what is in config.ini")] == ["config.ini"]
    assert [f.path for f in named_files(files, "see docs/config.ini")] == ["docs/config.ini"]
    defined = defined_names(files)
    assert {"calc_ttl", "Ledger", "MAX_RETRIES", "server"} <= set(defined)
    assert defined["Ledger"] == [("src/app.py", 4)]
    assert mentioned("calc_ttl", "renomme calc_ttl en compute_ttl")
    assert not mentioned("calc_ttl", "calc_ttl_old is gone")


def test_only_names_shaped_like_code_are_searched_for() -> None:
    # totem's own README request "list the files here and tell me what this project does"
    # searched for `list` and `project` (names totem defines) and filled the 1.5B's window
    assert all(map(distinctive, ["calc_ttl", "Ledger", "LedgerReconciler", "MAX_RETRIES",
                                 "sha256", "parseArgs"]))
    assert not any(map(distinctive, ["list", "project", "server", "to"]))


def test_test_files_and_commands_come_from_the_project(tmp_path: Path) -> None:
    assert is_test_file("test_slug.py") and is_test_file("tests/helpers.py")
    assert is_test_file("src/app.test.js") and is_test_file("pkg/x_test.go")
    assert not is_test_file("src/latest.py") and not is_test_file("contest.py")
    (tmp_path / "package.json").write_text(
        '{"scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}')
    assert project_test_command(tmp_path) is None
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    assert "pytest" in (project_test_command(tmp_path) or "")


def test_the_misspellings_of_the_files_read_are_one_note() -> None:
    note = spelling_note({"README.md": "Each depot will recieve a manifest.\n",
                          "ok.md": "All good here.\n"})
    assert "README.md: line 1: recieve (should be receive)" in note
    assert "ok.md" not in note and spelling_note({"ok.md": "fine\n"}) == ""


def test_degenerate_text_is_one_short_piece_or_one_line_again_and_again() -> None:
    assert degenerate("x = 1\n" + "\t" * 500)
    assert degenerate('{"new_string": "' + "\\t" * 300)
    assert degenerate("start\n" + "the same line\n" * 40)
    assert degenerate('"' + "pass\\n" * 40)
    assert not degenerate("def f():\n    return 1\n" * 3)
    assert not degenerate("".join(f"line {i}\n" for i in range(200)))
    assert not degenerate("=" * 120 + "\n" + " ".join(f"word{i}" for i in range(100)))


def test_degenerate_text_is_also_one_block_of_lines_again_and_again() -> None:
    # the 1.5B's acronym.py: one replace per punctuation mark, the marks again and again
    marks = "-/=<>?!:;'([]{}|~^&*+"
    cycle = "".join(f'    words = words.replace("{m}", " ")\n' for m in marks)
    head = "acronym.py\n```python\ndef abbreviate(words):\n"
    assert not degenerate(head + cycle)
    assert not degenerate(head + cycle * 2)
    assert degenerate(head + cycle * 3 + '    words = words.rep')
    assert degenerate('{"content": "' + cycle.replace("\n", "\\n") * 4)
    # real code that repeats itself a little: a few alike blocks, a table, a test file
    alike = "def f():\n    return 1\n\n\n" * 6
    assert not degenerate(alike)
    table = "".join(f"    ({i}, {i * i}),\n" for i in range(80))
    assert not degenerate("CASES = [\n" + table)
    tests = "".join(f"    def test_{i}(self):\n        self.assertEqual(f({i}), {i})\n\n"
                    for i in range(30))
    assert not degenerate("class T(unittest.TestCase):\n" + tests)


async def _stream(events: list[StreamEvent]):  # type: ignore[no-untyped-def]
    for event in events:
        yield event


def _collect(events: list[StreamEvent], guard: CallGuard) -> list[StreamEvent]:
    async def go() -> list[StreamEvent]:
        return [e async for e in guard_calls(_stream(events), guard)]

    return asyncio.run(go())


def test_a_call_written_in_a_loop_is_dropped_and_the_answer_ended() -> None:
    tabs = [ToolArgsChunk(0, "\\t" * 20) for _ in range(100)]
    events: list[StreamEvent] = [ToolCallBegin(0, "c0", "edit"),
                                 ToolArgsChunk(0, '{"path": "a.py", "new_string": "'), *tabs,
                                 StreamEnd("tool_calls")]
    guard = CallGuard()
    out = _collect(events, guard)
    assert guard.degenerate and not any(isinstance(e, ToolCallBegin) for e in out)
    assert isinstance(out[-1], StreamEnd) and out[-1].raw == "degenerate"
    # far fewer chunks read than sent: the stream was closed early
    text = [TextChunk("ok ") for _ in range(20)] + [TextChunk("again\n") for _ in range(80)]
    guard = CallGuard()
    out = _collect([*text, StreamEnd("stop")], guard)
    assert guard.degenerate and len(out) < 100


def test_a_plain_answer_and_call_pass_the_guard_whole() -> None:
    args = json.dumps({"path": "a.py", "content": "".join(f"v{i} = {i}\n" for i in range(300))})
    events: list[StreamEvent] = [TextChunk("Writing it."), ToolCallBegin(0, "c0", "write"),
                                 *[ToolArgsChunk(0, args[i:i + 50])
                                   for i in range(0, len(args), 50)],
                                 StreamEnd("tool_calls")]
    guard = CallGuard()
    out = _collect(events, guard)
    assert not guard.degenerate
    assert [e for e in out if isinstance(e, ToolArgsChunk)][0].text == args
