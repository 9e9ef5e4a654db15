"""What the agent accepts from a small model: answers checked against the project, calls
checked against the schema, names repaired only when they clearly mean a real tool."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.loop_agents import make_agent, run_once
from totem.events import Notice, RunFinished, ToolEnd, ToolStart
from totem.messages import TextPart, ToolPart
from totem.providers.base import ModelRequest
from totem.testing.scripted import ScriptedProvider, call, reply
from totem.tools.bash import Bash
from totem.tools.edit import Edit
from totem.tools.grep import Grep
from totem.tools.read import Read
from totem.tools.write import Write

SMALL = "qwen2.5-coder-0.5b-instruct"
HOSTED = "claude-sonnet-4-5"
TOOLS = [Read(), Grep(), Edit(), Write(), Bash()]


def user_texts(request: ModelRequest) -> list[str]:
    return [p.text for m in request.messages if m.role == "user" for p in m.parts
            if isinstance(p, TextPart)]


def finished(events: list[object]) -> RunFinished:
    last = events[-1]
    assert isinstance(last, RunFinished)
    return last


def with_config(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "config.ini").write_text("[server]\nport = 8437\n")
    (project / "utils.py").write_text("def recieve(data):\n    return data\n")


def test_an_answer_without_looking_gets_one_nudge_then_the_read_value(tmp_path: Path) -> None:
    with_config(tmp_path)
    provider = ScriptedProvider([
        reply("ANSWER: 8080"),
        call(("read", {"path": "config.ini"})),
        reply("ANSWER: 8437"),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "What port does the server listen on?")
    assert finished(events).reason == "finished"
    nudge = user_texts(provider.requests[1])[-1]
    assert nudge.startswith("You answered without looking at the project.")
    assert nudge.endswith("The project's files: config.ini, utils.py")
    assert any(isinstance(e, Notice) and "look with tools" in e.text for e in events)
    assert len(provider.requests) == 3


def test_the_nudge_is_given_once_per_run(tmp_path: Path) -> None:
    with_config(tmp_path)
    provider = ScriptedProvider([reply("ANSWER: 8080"), reply("ANSWER: 8080")])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "What port does the server listen on?")
    assert finished(events).reason == "finished" and len(provider.requests) == 2


def test_a_hosted_model_is_not_nudged(tmp_path: Path) -> None:
    with_config(tmp_path)
    provider = ScriptedProvider([reply("ANSWER: 8080")])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=HOSTED)
    _, events = run_once(agent, "What port does the server listen on?")
    assert finished(events).reason == "finished" and len(provider.requests) == 1


def test_an_answer_naming_a_path_that_does_not_exist_is_sent_back_once(tmp_path: Path) -> None:
    with_config(tmp_path)
    provider = ScriptedProvider([
        call(("grep", {"pattern": "Invoice"})),
        reply("The builder is in src/invoice/InvoiceBuilder.java."),
        reply("There is no invoice builder: it does not exist."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Where is the invoice builder?")
    assert finished(events).reason == "finished"
    nudge = user_texts(provider.requests[2])[-1]
    assert "src/invoice/InvoiceBuilder.java, which does not exist" in nudge


def test_paths_that_exist_or_that_the_run_touched_are_not_questioned(tmp_path: Path) -> None:
    with_config(tmp_path)
    (tmp_path / "project" / "old_backup.py").write_text("x = 1\n")
    provider = ScriptedProvider([
        call(("bash", {"command": "rm old_backup.py"})),
        reply("Removed old_backup.py; config.ini and utils.py are unchanged."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "delete the backup")
    assert finished(events).reason == "finished" and len(provider.requests) == 2


def test_a_claimed_change_that_was_not_made_is_not_success(tmp_path: Path) -> None:
    with_config(tmp_path)
    provider = ScriptedProvider([
        call(("read", {"path": "utils.py"})),
        reply("I have already fixed the typo in utils.py."),
        reply("I have already fixed the typo in utils.py."),
        reply("I have already fixed the typo in utils.py."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    sid, events = run_once(agent, "Fix the typo 'recieve' in utils.py.")
    end = finished(events)
    assert end.reason == "unverified" and "no change was made" in end.detail
    assert "recieve" in (tmp_path / "project" / "utils.py").read_text()


def test_a_claimed_change_that_was_made_is_success(tmp_path: Path) -> None:
    with_config(tmp_path)
    provider = ScriptedProvider([
        call(("read", {"path": "utils.py"})),
        call(("edit", {"path": "utils.py", "old_string": "recieve", "new_string": "receive"})),
        reply("I have fixed the typo in utils.py."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Fix the typo 'recieve' in utils.py.")
    assert finished(events).reason == "finished"


def test_arguments_copied_from_the_schema_are_refused(tmp_path: Path) -> None:
    with_config(tmp_path)
    description = Bash.description
    provider = ScriptedProvider([
        call(("bash", {"command": description})),
        call(("read", {"path": {"type": "string", "description": "File or folder"}})),
        reply("done"),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "list the files")
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert all(e.is_error for e in ends)
    assert "text of the tool's description" in ends[0].output
    assert "copy of its schema" in ends[1].output


def test_a_tool_named_after_a_file_writes_it_for_a_local_model_only(tmp_path: Path) -> None:
    for model, expected in ((SMALL, "hello world\n"), (HOSTED, None)):
        root = tmp_path / model / "project"
        root.mkdir(parents=True)
        provider = ScriptedProvider([call(("hello.txt", {"content": "hello world\n"})),
                                     reply("Created it.")])
        agent = make_agent(tmp_path / model, provider, tools=TOOLS, model=model)
        sid, events = run_once(agent, "create hello.txt saying hello world")
        start = next(e for e in events if isinstance(e, ToolStart))
        target = root / "hello.txt"
        if expected is None:
            assert start.name == "hello.txt" and not target.exists()
            end = next(e for e in events if isinstance(e, ToolEnd))
            assert "Tools: bash, edit, grep, read, write" in end.output
        else:
            assert start.name == "write" and target.read_text() == expected
            parts = [p for m in agent.store.messages(sid) for p in m.parts
                     if isinstance(p, ToolPart)]
            assert parts[0].name == "write" and parts[0].state == "completed"


def test_an_answer_that_copies_its_instructions_is_asked_again_once(tmp_path: Path) -> None:
    with_config(tmp_path)
    copied = "To change a file that exists, read it first, then call edit."
    provider = ScriptedProvider([
        call(("read", {"path": "config.ini"})),
        reply(copied),
        reply("It is a server configured to listen on port 8437."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    agent.system = "Rules.\n4. " + copied + " old_string is text copied from the file."
    _, events = run_once(agent, "What does this project configure?")
    assert finished(events).reason == "finished"
    asked = user_texts(provider.requests[2])[-1]
    assert asked.startswith("Your answer repeats the instructions you were given")
    assert "What does this project configure?" in asked
    assert any(isinstance(e, Notice) and "repeats the instructions" in e.text for e in events)
    assert len(provider.requests) == 3


def test_an_answer_in_its_own_words_is_not_taken_for_a_copy(tmp_path: Path) -> None:
    with_config(tmp_path)
    provider = ScriptedProvider([
        call(("read", {"path": "config.ini"})),
        reply("The server listens on port 8437, as config.ini says."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "What port does the server listen on?")
    assert finished(events).reason == "finished" and len(provider.requests) == 2


def test_a_test_run_that_exits_non_zero_counts_as_run(tmp_path: Path) -> None:
    with_config(tmp_path)
    provider = ScriptedProvider([
        call(("read", {"path": "utils.py"})),
        call(("bash", {"command": "echo '5 failed, 8 passed'; exit 1"})),
        reply("There are 5 tests that fail."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Run this project's tests and tell me how many of them fail.")
    assert finished(events).reason == "finished" and len(provider.requests) == 3


def test_a_file_the_run_created_may_be_written_again_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The small model's own new file: write again is its natural way to fix it; a file that
    was there before stays protected."""
    import sys

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    with_config(tmp_path)
    (tmp_path / "project" / "stack.py").write_text("class Stack:\n    pass\n")
    provider = ScriptedProvider([
        call(("write", {"path": "tests/test_stack.py", "content": "def test_pop():\n    pass\n"})),
        call(("write", {"path": "tests/test_stack.py",
                        "content": "from stack import Stack\n\n\ndef test_pop():\n    pass\n"})),
        call(("read", {"path": "config.ini"})),
        call(("write", {"path": "config.ini", "content": "port = 1\n"})),
        reply("Wrote the test."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Write a test file tests/test_stack.py for stack.py.")
    ends = [e for e in events if isinstance(e, ToolEnd)]
    # the last: the test written, run after the change (it passes)
    assert [e.is_error for e in ends] == [False, False, False, True, False]
    assert (tmp_path / "project" / "tests" / "test_stack.py").read_text().startswith("from stack")
    assert "keeps 0 of its 2 lines" in ends[-2].output
    assert ends[-1].name == "bash" and "1 passed" in ends[-1].output
    assert (tmp_path / "project" / "config.ini").read_text() == "[server]\nport = 8437\n"


def test_the_same_failure_four_times_in_a_row_ends_a_small_model_s_calls(
    tmp_path: Path,
) -> None:
    with_config(tmp_path)
    root = tmp_path / "project"
    (root / "notes.md").write_text("the 13th\n")
    tries = [call(("edit", {"path": "notes.md", "old_string": "the 12th",
                            "new_string": f"the {day}th"})) for day in range(14, 24)]
    provider = ScriptedProvider([call(("read", {"path": "notes.md"})), *tries,
                                 reply("I could not change it.")])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "In notes.md, change the 12th to the 14th.")
    edits = [e for e in events if isinstance(e, ToolEnd) and e.name == "edit"]
    assert len(edits) == 4 and all(e.is_error for e in edits)
    assert finished(events).reason == "repeat"


def test_an_edit_already_made_is_refused_and_the_second_place_is_left_alone(
    tmp_path: Path,
) -> None:
    """The real 0.5B run of "set the database timeout to 45 in app.ini": the right edit,
    then the same edit again, which would change the cache timeout too."""
    with_config(tmp_path)
    root = tmp_path / "project"
    ini = "[database]\ntimeout = 30\n\n[cache]\ntimeout = 30\n"
    (root / "app.ini").write_text(ini)
    same = ("edit", {"path": "app.ini", "old_string": "[database]\ntimeout = 30",
                     "new_string": "[database]\ntimeout = 45"})
    provider = ScriptedProvider([call(("read", {"path": "app.ini"})), call(same), call(same),
                                 reply("The database timeout is 45 now.")])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Set the database timeout to 45 in app.ini. Leave the cache "
                                "settings alone.")
    assert (root / "app.ini").read_text() == ini.replace("30", "45", 1)
    ends = [e for e in events if isinstance(e, ToolEnd) and e.name == "edit"]
    assert [e.is_error for e in ends] == [False, True]
    assert "this same edit of app.ini was already made" in ends[1].output




def test_a_whole_write_that_leaves_out_most_of_a_file_is_refused(tmp_path: Path) -> None:
    # the real 1.5B, asked to fix "name 'json' is not defined", wrote 2 of report.py's 6 lines
    # (both kept word for word, the __main__ block lost); then it wrote the whole file
    with_config(tmp_path)
    source = ("def summary(rows):\n    return json.dumps({'count': len(rows)})\n\n\n"
              "if __name__ == '__main__':\n    print(summary(['a', 'b']))\n")
    (tmp_path / "project" / "report.py").write_text(source)
    provider = ScriptedProvider([
        call(("read", {"path": "report.py"})),
        call(("write", {"path": "report.py", "content": "def summary(rows):\n"
                        "    return json.dumps({'count': len(rows)})"})),
        call(("write", {"path": "report.py", "content": "import json\n\n\n" + source})),
        reply("Added the import."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "python report.py -> NameError: name 'json' is not defined")
    ends = [e for e in events if isinstance(e, ToolEnd) and e.name == "write"]
    assert [e.is_error for e in ends] == [True, False]
    assert "keeps 2 of its 4 lines (2 lines in all)" in ends[0].output
    assert (tmp_path / "project" / "report.py").read_text() == "import json\n\n\n" + source
