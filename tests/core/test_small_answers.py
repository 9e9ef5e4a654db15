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
from totem.tools.python_check import python_check
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
    assert user_texts(provider.requests[2])[-1].startswith("Nothing has been done yet")
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


def test_a_request_for_a_change_answered_with_none_is_asked_once_to_make_it(
    tmp_path: Path,
) -> None:
    with_config(tmp_path)
    provider = ScriptedProvider([
        call(("read", {"path": "utils.py"})),
        reply("The file utils.py has been read."),  # the real 1.5B's answer after a read
        call(("edit", {"path": "utils.py", "old_string": "recieve", "new_string": "receive"})),
        reply("Fixed the typo."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Fix the typo 'recieve' in utils.py.")
    assert finished(events).reason == "finished"
    nudge = user_texts(provider.requests[2])[-1]
    assert "the request asks for it: Fix the typo 'recieve' in utils.py." in nudge
    assert "receive" in (tmp_path / "project" / "utils.py").read_text()
    assert any(isinstance(e, Notice) and "none was made" in e.text for e in events)


def test_a_question_is_never_asked_to_change_anything(tmp_path: Path) -> None:
    with_config(tmp_path)
    provider = ScriptedProvider([
        call(("read", {"path": "config.ini"})),
        reply("It listens on port 8437."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Which port is set in config.ini? Can I change it?")
    assert finished(events).reason == "finished" and len(provider.requests) == 2


def test_a_request_to_run_something_is_asked_to_run_it_not_to_edit(tmp_path: Path) -> None:
    with_config(tmp_path)
    provider = ScriptedProvider([
        call(("read", {"path": "utils.py"})),
        reply("2"),  # the real 1.5B's answer before it ran anything
        call(("bash", {"command": "echo '3 failed, 4 passed'"})),
        reply("3 tests fail."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Run this project's tests and tell me how many of them fail.")
    assert finished(events).reason == "finished"
    nudge = user_texts(provider.requests[2])[-1]
    assert nudge.startswith("Nothing has been run yet") and "Do not change any file" in nudge


def test_an_answer_about_a_name_the_project_lacks_is_sent_back_once(tmp_path: Path) -> None:
    with_config(tmp_path)
    provider = ScriptedProvider([
        call(("grep", {"pattern": "[Rr]edis"})),
        # the real 1.5B's answer after "No matches for [Rr]edis."
        reply("The function in the project that connects to Redis is `recieve` in utils.py."),
        reply("There is none: nothing in the project connects to Redis."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Which function in this project connects to Redis?")
    assert finished(events).reason == "finished"
    nudge = user_texts(provider.requests[2])[-1]
    assert nudge.startswith("Nothing in the project mentions Redis")
    assert len(provider.requests) == 3


def test_a_plain_answer_about_a_missing_name_is_not_questioned(tmp_path: Path) -> None:
    with_config(tmp_path)
    provider = ScriptedProvider([
        call(("read", {"path": "config.ini"})),
        reply("It runs on any system with Python 3."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "How do I run it on Linux?")
    assert finished(events).reason == "finished" and len(provider.requests) == 2


def test_a_file_still_there_after_delete_is_asked_again_with_the_command(
    tmp_path: Path,
) -> None:
    with_config(tmp_path)
    (tmp_path / "project" / "old_notes.txt").write_text("draft ideas from 2019")
    provider = ScriptedProvider([
        # the real 1.5B model emptied the file, then said it was deleted
        call(("read", {"path": "old_notes.txt"})),
        call(("edit", {"path": "old_notes.txt", "old_string": "draft ideas from 2019",
                       "new_string": ""})),
        reply("Deleted old_notes.txt"),
        call(("bash", {"command": "rm old_notes.txt"})),
        reply("Deleted old_notes.txt"),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Delete the file old_notes.txt, it is no longer needed.")
    assert finished(events).reason == "finished"
    nudge = user_texts(provider.requests[3])[-1]
    assert "old_notes.txt still exists. To delete it, call bash with: rm old_notes.txt" in nudge
    assert not (tmp_path / "project" / "old_notes.txt").exists()


def test_an_answer_after_a_failed_check_is_asked_to_fix_it(tmp_path: Path) -> None:
    with_config(tmp_path)
    (tmp_path / "project" / "report.py").write_text("def summary(rows):\n"
                                                    "    return json.dumps(rows)\n")
    provider = ScriptedProvider([
        call(("read", {"path": "report.py"})),
        call(("edit", {"path": "report.py", "old_string": "json.dumps(rows)",
                       "new_string": "json.dumps(rows, indent=4)"})),
        reply("The import was added."),
        call(("edit", {"path": "report.py", "old_string": "def summary",
                       "new_string": "import json\n\n\ndef summary"})),
        reply("Added import json."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    agent.after_write = [python_check]
    _, events = run_once(agent, "report.py fails with NameError: name 'json' is not defined. "
                                "Fix it.")
    assert finished(events).reason == "finished"
    nudge = user_texts(provider.requests[3])[-1]
    assert "[Check of report.py: line 2: name 'json' is not defined" in nudge
    assert (tmp_path / "project" / "report.py").read_text().startswith("import json")


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


def test_a_file_to_write_that_is_not_there_is_named_with_the_call(tmp_path: Path) -> None:
    with_config(tmp_path)
    (tmp_path / "project" / "stack.py").write_text("class Stack:\n    pass\n")
    provider = ScriptedProvider([
        call(("read", {"path": "stack.py"})),
        # the real 1.5B answer: the test described, not written
        reply("The test file tests/test_stack.py should contain a test case for pop."),
        call(("write", {"path": "tests/test_stack.py", "content": "def test_pop():\n    pass\n"})),
        reply("Wrote tests/test_stack.py."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Write a pytest test file tests/test_stack.py for the Stack "
                                "class in stack.py.")
    assert finished(events).reason == "finished"
    nudge = user_texts(provider.requests[2])[-1]
    assert ("tests/test_stack.py does not exist yet. To create it, call write with path "
            "tests/test_stack.py") in nudge
    assert (tmp_path / "project" / "tests" / "test_stack.py").is_file()


def test_a_line_to_add_to_a_file_is_no_file_to_create(tmp_path: Path) -> None:
    from totem.run.request_state import file_ops_left

    with_config(tmp_path)
    root = tmp_path / "project"
    assert file_ops_left("Add a line 'done' to notes.txt.", root) is None
    assert file_ops_left("Create a file called hello.txt that says hi.", root) == (
        "hello.txt does not exist yet. To create it, call write with path hello.txt and the "
        "file's whole content.")
    assert file_ops_left("Fix the typo in config.ini.", root) is None


def test_the_section_the_request_names_picks_the_place_of_an_edit(tmp_path: Path) -> None:
    """The request reaches a small model's edit: `timeout = 30` is under two headers."""
    with_config(tmp_path)
    ini = tmp_path / "project" / "app.ini"
    ini.write_text("[database]\ntimeout = 30\n\n[cache]\ntimeout = 30\n")
    provider = ScriptedProvider([
        call(("read", {"path": "app.ini"})),
        call(("edit", {"path": "app.ini", "old_string": "timeout = 30",
                       "new_string": "timeout = 45"})),
        reply("Set the database timeout to 45."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "In app.ini, set the database timeout to 45 seconds.")
    assert finished(events).reason == "finished"
    assert ini.read_text() == "[database]\ntimeout = 45\n\n[cache]\ntimeout = 30\n"
    ini.write_text("[database]\ntimeout = 30\n\n[cache]\ntimeout = 30\n")
    hosted = make_agent(tmp_path, ScriptedProvider([
        call(("read", {"path": "app.ini"})),
        call(("edit", {"path": "app.ini", "old_string": "timeout = 30",
                       "new_string": "timeout = 50"})),
        reply("Tried."),
    ]), tools=TOOLS, model=HOSTED)
    _, events = run_once(hosted, "In app.ini, set the database timeout to 50 seconds.")
    assert any(isinstance(e, ToolEnd) and e.is_error and "appears 2 times" in e.output
               for e in events)


def test_a_failed_edit_is_told_the_file_the_request_asks_to_create(tmp_path: Path) -> None:
    """The real 0.5B run of "create NOTES.md": it edited README.md with the new line as
    old_string, three times; the error now names the call that does what was asked."""
    with_config(tmp_path)
    (tmp_path / "project" / "README.md").write_text("# Harbor\n\nA tiny release tracker.\n")
    provider = ScriptedProvider([
        call(("read", {"path": "README.md"})),
        call(("edit", {"path": "README.md", "old_string": "Release 4.2 ships on Friday",
                       "new_string": "Release 4.2 ships on Monday"})),
        call(("write", {"path": "NOTES.md", "content": "Release 4.2 ships on Friday\n"})),
        reply("Created NOTES.md."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Create a file NOTES.md with the line: Release 4.2 ships on "
                                "Friday")
    errors = [e.output for e in events if isinstance(e, ToolEnd) and e.is_error]
    assert errors and errors[0].endswith(
        "[The request still asks for this: NOTES.md does not exist yet. To create it, call "
        "write with path NOTES.md and the file's whole content.]")
    assert (tmp_path / "project" / "NOTES.md").is_file()


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
    assert "already exists, and write only makes new files" in ends[-2].output
    assert ends[-1].name == "bash" and "1 passed" in ends[-1].output
    assert (tmp_path / "project" / "config.ini").read_text() == "[server]\nport = 8437\n"


MATHX = ("def double(x):\n    return 2 * x\n\n\ndef mean(values):\n"
         "    return sum(values) / len(values)\n")
CLAMP_ANSWER = ("To add the `clamp` function to the `mathx.py` file, you can use the following "
                "code:\n\n```python\ndef clamp(value, low, high):\n    if value < low:\n"
                "        return low\n    elif value > high:\n        return high\n    else:\n"
                "        return value\n```\n\nThis function checks the range.")
CLAMP_REQUEST = ("Add a function clamp(value, low, high) to mathx.py that returns value limited "
                 "to the range low..high.")


def test_a_function_written_in_the_closing_answer_is_added_with_edit(tmp_path: Path) -> None:
    """The real 0.5B run: the same edit three times (old_string equal to new_string), then
    the function, right, in the closing answer."""
    with_config(tmp_path)
    (tmp_path / "project" / "mathx.py").write_text(MATHX)
    same = ("edit", {"path": "mathx.py", "old_string": "def double(x):",
                     "new_string": "def double(x):"})
    provider = ScriptedProvider([call(("read", {"path": "mathx.py"})), call(same), call(same),
                                 call(same), reply(CLAMP_ANSWER)])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, CLAMP_REQUEST)
    assert finished(events).reason == "finished"
    text = (tmp_path / "project" / "mathx.py").read_text()
    assert text.startswith(MATHX.rstrip("\n")) and "def clamp(value, low, high):" in text
    assert any(isinstance(e, Notice) and "wrote the change in its answer" in e.text
               for e in events)


def test_a_function_of_the_file_rewritten_in_an_answer_replaces_it(tmp_path: Path) -> None:
    with_config(tmp_path)
    (tmp_path / "project" / "mathx.py").write_text(MATHX)
    provider = ScriptedProvider([
        call(("read", {"path": "mathx.py"})),
        reply("Here it is:\n```python\ndef mean(values):\n    if not values:\n        return 0\n"
              "    return sum(values) / len(values)\n```"),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Make mean in mathx.py return 0 for an empty list.")
    assert finished(events).reason == "finished"
    assert (tmp_path / "project" / "mathx.py").read_text() == MATHX.replace(
        "def mean(values):\n", "def mean(values):\n    if not values:\n        return 0\n")


def test_code_in_an_answer_to_a_question_or_from_a_hosted_model_changes_nothing(
    tmp_path: Path,
) -> None:
    with_config(tmp_path)
    (tmp_path / "project" / "mathx.py").write_text(MATHX)
    for model, request in ((SMALL, "How would a clamp function look next to mathx.py's "
                                    "functions? Show me."),
                           (HOSTED, CLAMP_REQUEST)):
        provider = ScriptedProvider([call(("read", {"path": "mathx.py"})), reply(CLAMP_ANSWER),
                                     reply(CLAMP_ANSWER), reply(CLAMP_ANSWER)])
        run_once(make_agent(tmp_path, provider, tools=TOOLS, model=model), request)
        assert (tmp_path / "project" / "mathx.py").read_text() == MATHX


def test_code_that_does_not_parse_or_names_nothing_asked_is_left_alone(tmp_path: Path) -> None:
    from totem.run.answer_code import calls_from_answer

    root = tmp_path / "project"
    root.mkdir()
    (root / "mathx.py").write_text(MATHX)
    assert calls_from_answer("```python\ndef clamp(value:\n```", request=CLAMP_REQUEST,
                             root=root) == []
    assert calls_from_answer("```python\ndef helper(x):\n    return x\n```",
                             request=CLAMP_REQUEST, root=root) == []
    assert calls_from_answer("```python\nprint(clamp(1, 2, 3))\n```", request=CLAMP_REQUEST,
                             root=root) == []
    assert calls_from_answer(CLAMP_ANSWER, request="Add clamp to a new file.", root=root) == []


def test_a_deletion_the_model_cannot_make_is_made_with_the_request_s_own_command(
    tmp_path: Path,
) -> None:
    """The real 0.5B run of "delete old_notes.txt": the same failing edit three times, then
    an answer that only restates the request."""
    with_config(tmp_path)
    (tmp_path / "project" / "old_notes.txt").write_text("draft ideas from 2019")
    stuck = ("edit", {"path": "old_notes.txt", "old_string": "old draft ideas from 2019",
                      "new_string": "current notes"})
    provider = ScriptedProvider([call(("read", {"path": "old_notes.txt"})), call(stuck),
                                 call(stuck), call(stuck),
                                 reply("To delete the file `old_notes.txt`, it is no longer "
                                       "needed.")])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Delete the file old_notes.txt, it is no longer needed.")
    assert finished(events).reason == "finished"
    assert not (tmp_path / "project" / "old_notes.txt").exists()
    starts = [e for e in events if isinstance(e, ToolStart)]
    assert starts[-1].name == "bash" and starts[-1].input == {"command": "rm old_notes.txt"}
    assert any(isinstance(e, Notice) and "running the request's own command: rm old_notes.txt"
               in e.text for e in events)


def test_a_rename_left_undone_after_the_nudge_is_made_and_nothing_outside_is_touched(
    tmp_path: Path,
) -> None:
    with_config(tmp_path)
    root = tmp_path / "project"
    (root / "helpers.py").write_text("X = 1\n")
    (tmp_path / "outside.txt").write_text("not the project's")
    provider = ScriptedProvider([reply("Renamed helpers.py to shared.py."),
                                 reply("Renamed helpers.py to shared.py."),
                                 reply("Renamed helpers.py to shared.py."),
                                 reply("Renamed helpers.py to shared.py.")])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Rename helpers.py to shared.py and delete ../outside.txt now.")
    assert (root / "shared.py").read_text() == "X = 1\n" and not (root / "helpers.py").exists()
    commands = [e.input["command"] for e in events if isinstance(e, ToolStart)
                and e.name == "bash"]
    assert commands == ["mv helpers.py shared.py"]
    assert (tmp_path / "outside.txt").exists()


def test_a_file_to_create_echoed_in_the_closing_answer_is_written(tmp_path: Path) -> None:
    """The real 0.5B run of "create NOTES.md with this line": a failing edit of README.md
    three times, then the shell commands that would do it, in the closing answer."""
    with_config(tmp_path)
    root = tmp_path / "project"
    (root / "README.md").write_text("# Harbor\n")
    stuck = ("edit", {"path": "README.md", "old_string": "Release 4.2 ships on Friday",
                      "new_string": "Release 4.2 ships on Monday"})
    closing = ("To create a file named `NOTES.md` with the specified content, you can use the "
               "following commands:\n\n```bash\ntouch NOTES.md\necho \"Release 4.2 ships on "
               "Friday\" > NOTES.md\n```\n\nThis command creates the file.")
    provider = ScriptedProvider([call(("read", {"path": "README.md"})), call(stuck), call(stuck),
                                 call(stuck), reply(closing)])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Create a file named NOTES.md that contains exactly this one "
                                "line: Release 4.2 ships on Friday")
    assert finished(events).reason == "finished"
    assert (root / "NOTES.md").read_text() == "Release 4.2 ships on Friday\n"
    assert (root / "README.md").read_text() == "# Harbor\n"


def test_the_content_of_a_new_file_comes_only_from_a_block_of_its_kind(tmp_path: Path) -> None:
    from totem.run.answer_code import calls_from_answer

    root = tmp_path / "project"
    root.mkdir()
    request = "Create a file config.json with the default settings."
    assert calls_from_answer("```python\nprint('x')\n```", request=request, root=root) == []
    assert calls_from_answer("```bash\necho hi > other.json\n```", request=request,
                             root=root) == []
    [made] = calls_from_answer("```json\n{\"debug\": false}\n```", request=request, root=root)
    assert made.args == {"path": "config.json", "content": "{\"debug\": false}\n"}


def test_the_test_a_request_names_is_run_after_the_change_and_its_failure_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real 1.5B run of fix_to_pass_test: a change that does not fix it, an answer that
    says it did. The test is run; its failure goes back to the model, which fixes the code."""
    import sys

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    with_config(tmp_path)
    root = tmp_path / "project"
    (root / "slug.py").write_text("def slugify(title):\n    return title.replace(' ', '-')\n")
    (root / "test_slug.py").write_text("from slug import slugify\n\n\ndef test_slugify():\n"
                                       "    assert slugify('Hello World') == 'hello-world'\n")
    provider = ScriptedProvider([
        call(("read", {"path": "slug.py"})),
        call(("edit", {"path": "slug.py", "old_string": "title.replace(' ', '-')",
                       "new_string": "title.strip().replace(' ', '-')"})),
        reply("Fixed slug.py so the test passes."),
        call(("edit", {"path": "slug.py", "old_string": "title.strip().replace(' ', '-')",
                       "new_string": "title.strip().lower().replace(' ', '-')"})),
        reply("Now it lowercases too."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "The test in test_slug.py fails. Fix the code so that it "
                                "passes, without changing the test.")
    assert finished(events).reason == "finished"
    runs = [e for e in events if isinstance(e, ToolEnd) and e.name == "bash"]
    assert [r.is_error for r in runs] == [True, False]  # failed, then passed
    nudge = user_texts(provider.requests[3])[-1]
    assert nudge.startswith("The test still fails after your change.")
    assert "assert 'Hello-World' == 'hello-world'" in nudge
    assert ("[The first failure, in plain words: slugify('Hello World') returned "
            "'Hello-World', but the test expects 'hello-world'.]") in nudge
    assert any(isinstance(e, Notice) and "test_slug.py fails after the change" in e.text
               for e in events)


def test_a_test_the_model_wrote_that_fails_goes_back_to_it_to_fix_the_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real 1.5B run of write_test: Stack copied into the test, and popping an empty
    stack asserted to give 0."""
    import sys

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    with_config(tmp_path)
    root = tmp_path / "project"
    (root / "stack.py").write_text("class Stack:\n    def __init__(self):\n        self.items = []"
                                   "\n\n    def push(self, x):\n        self.items.append(x)\n\n"
                                   "    def pop(self):\n        return self.items.pop()\n")
    wrong = ("from stack import Stack\n\n\ndef test_pop():\n    s = Stack()\n    s.push(1)\n"
             "    assert s.pop() == 1\n    assert s.pop() == 0\n")
    right = wrong.replace("    assert s.pop() == 0\n", "")
    provider = ScriptedProvider([
        call(("write", {"path": "tests/test_stack.py", "content": wrong})),
        reply("I wrote tests/test_stack.py."),
        call(("write", {"path": "tests/test_stack.py", "content": right})),
        reply("The test now checks only pop."),
    ])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Write a pytest test file tests/test_stack.py for the Stack "
                                "class in stack.py. It should check that pop returns the most "
                                "recently pushed item.")
    assert finished(events).reason == "finished"
    nudge = user_texts(provider.requests[2])[-1]
    assert nudge.startswith("The test file you wrote fails when it is run.")
    assert "IndexError" in nudge
    runs = [e for e in events if isinstance(e, ToolEnd) and e.name == "bash"]
    assert [r.is_error for r in runs] == [True, False]
    assert (root / "tests" / "test_stack.py").read_text() == right


def test_a_misspelling_the_model_leaves_in_the_named_file_is_corrected_by_totem(
    tmp_path: Path,
) -> None:
    """The real 0.5B run of "there is a spelling mistake in README.md": the same no-op edit
    of courier.py three times, then an answer that says what to replace."""
    with_config(tmp_path)
    root = tmp_path / "project"
    (root / "README.md").write_text("# Courier\n\nEach depot will recieve a manifest.\n"
                                    "Teh route is printed.\n")
    (root / "courier.py").write_text("print('route')\n")
    stuck = ("edit", {"path": "courier.py", "old_string": "print('route')",
                      "new_string": "print('route')"})
    provider = ScriptedProvider([call(("read", {"path": "README.md"})), call(stuck),
                                 call(stuck), call(stuck),
                                 reply('Replace "recieve" with "receive" in README.md.')])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "There is a spelling mistake in README.md. Please fix it.")
    assert finished(events).reason == "finished"
    assert (root / "README.md").read_text() == ("# Courier\n\nEach depot will receive a "
                                                "manifest.\nThe route is printed.\n")
    assert (root / "courier.py").read_text() == "print('route')\n"
    edits = [e.input for e in events if isinstance(e, ToolStart) and e.name == "edit"][-2:]
    assert edits[0] == {"path": "README.md", "old_string": "Each depot will recieve a manifest.",
                        "new_string": "Each depot will receive a manifest."}
    assert any(isinstance(e, Notice) and "misspellings codespell finds" in e.text
               for e in events)


def test_only_certain_corrections_of_a_line_found_once_are_made() -> None:
    from totem.tools.spelling import spelling_fixes

    text = "a line that will recieve\nsame\nsame\nteh\nteh\nthe abd end\n"
    # "teh" is on two lines (the edit fits two places); "abd" has two corrections
    assert spelling_fixes(text) == [("a line that will recieve", "a line that will receive")]
    assert spelling_fixes("Teh start\n") == [("Teh start", "The start")]


def test_change_targets_and_lines_given_word_for_word(tmp_path: Path) -> None:
    from totem.run.request_state import asked_lines, change_targets

    root = tmp_path
    for name in (".gitignore", "app.py", "report.py", "slug.py", "a.ini"):
        (root / name).write_text("x\n")
    (root / "test_slug.py").write_text("from slug import slugify\nimport os\n")
    assert change_targets("Add *.log as a new last line of .gitignore.", root) == {
        "edit": [".gitignore"], "write": []}
    assert change_targets("Create NOTES.md containing 'hi'", root) == {
        "edit": [], "write": ["NOTES.md"]}
    assert change_targets("Set the timeout to 45 in a.ini. Leave app.py alone.", root) == {
        "edit": ["a.ini", "app.py"], "write": []}
    for vague in ("python app.py prints 'Helo' - fix it.",  # where it shows, not the fix
                  "Running report.py fails with NameError. Fix it.",
                  "There is a typo in app.py. Fix it.",  # made certain at the end
                  "Rename app.py to main.py.", "What does app.py do?"):
        assert change_targets(vague, root) is None, vague
    # a failing test: the fix goes in the project's code the test imports
    assert change_targets("The test in test_slug.py fails. Fix the code.", root) == {
        "edit": ["slug.py"], "write": []}
    assert asked_lines("Add *.log as a new last line of .gitignore.", root) == [
        ("append", ".gitignore", "*.log")]
    assert asked_lines("Please append 'dist/' to .gitignore", root) == [
        ("append", ".gitignore", "dist/")]
    assert asked_lines("Create a file named NOTES.md that contains exactly this one line: "
                       "It ships.", root) == [("create", "NOTES.md", "It ships.")]
    for not_a_line in ("Add logging to app.py", "Add a function clamp to app.py.",
                       "Fix app.py and add 'x' to .gitignore", "Add 'x' to missing.txt"):
        assert asked_lines(not_a_line, root) == [], not_a_line


def test_a_line_the_model_did_not_append_is_appended_by_totem(tmp_path: Path) -> None:
    """The real 0.5B run of "add *.log as a new last line of .gitignore": main.py's print
    edited, then the same failing edit until the repeat guard."""
    with_config(tmp_path)
    root = tmp_path / "project"
    (root / ".gitignore").write_text("__pycache__/\ndist/\n")
    stuck = ("edit", {"path": ".gitignore", "old_string": "main.py", "new_string": "log.txt"})
    provider = ScriptedProvider([call(("read", {"path": ".gitignore"})), call(stuck),
                                 call(stuck), call(stuck), reply("Use git add .gitignore.")])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Add *.log as a new last line of .gitignore.")
    assert (root / ".gitignore").read_text() == "__pycache__/\ndist/\n*.log\n"
    assert finished(events).reason == "finished"


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
    then the same edit again, which changed the cache timeout too."""
    with_config(tmp_path)
    root = tmp_path / "project"
    ini = "[database]\ntimeout = 30\n\n[cache]\ntimeout = 30\n"
    (root / "app.ini").write_text(ini)
    same = ("edit", {"path": "app.ini", "old_string": "timeout = 30",
                     "new_string": "timeout = 45"})
    provider = ScriptedProvider([call(("read", {"path": "app.ini"})), call(same), call(same),
                                 reply("The database timeout is 45 now.")])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Set the database timeout to 45 in app.ini. Leave the cache "
                                "settings alone.")
    assert (root / "app.ini").read_text() == ini.replace("30", "45", 1)
    ends = [e for e in events if isinstance(e, ToolEnd) and e.name == "edit"]
    assert [e.is_error for e in ends] == [False, True]
    assert "this same edit of app.ini was already made" in ends[1].output


def test_a_standard_module_the_request_s_name_error_quotes_is_imported_by_totem(
    tmp_path: Path,
) -> None:
    """The real 0.5B run of "python report.py fails with NameError: name 'json' is not
    defined": the same junk edit three times, the import call it was given left unmade."""
    import subprocess
    import sys

    with_config(tmp_path)
    root = tmp_path / "project"
    (root / "report.py").write_text("def summary(rows):\n    return json.dumps(len(rows))\n\n\n"
                                    "if __name__ == '__main__':\n    print(summary([1]))\n")
    junk = ("edit", {"path": "report.py", "old_string": "report.py",
                     "new_string": "summary.json"})
    provider = ScriptedProvider([call(("read", {"path": "report.py"})), call(junk), call(junk),
                                 call(junk), reply("Fix it by importing json.")])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "Running python report.py fails with NameError: name 'json' "
                                "is not defined. Fix it.")
    ran = subprocess.run([sys.executable, "report.py"], cwd=root, capture_output=True,
                         text=True, check=False)
    assert ran.returncode == 0 and ran.stdout == "1\n", ran.stderr
    assert any(isinstance(e, Notice) and "importing the standard module" in e.text
               for e in events)


def test_asked_to_list_the_files_an_answer_without_them_is_asked_again(
    tmp_path: Path,
) -> None:
    """The real 1.5B, asked the README's first question, described the project only."""
    with_config(tmp_path)
    root = tmp_path / "project"
    (root / "app.py").write_text("print('hi')\n")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("# Guide\n")
    provider = ScriptedProvider([call(("read", {"path": "."})),
                                 reply("It is a small Python app that greets."),
                                 reply("The files: app.py, config.ini, docs/. It greets.")])
    agent = make_agent(tmp_path, provider, tools=TOOLS, model=SMALL)
    _, events = run_once(agent, "list the files here and tell me what this project does")
    assert finished(events).reason == "finished"
    nudge = user_texts(provider.requests[2])[-1]
    assert nudge.startswith("Your answer does not list the files.")
    assert "app.py" in nudge and "docs/" in nudge
