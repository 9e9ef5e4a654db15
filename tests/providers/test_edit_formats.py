"""The small-model edit formats read back replies as small models write them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from totem.messages import Message, TextPart, new_id
from totem.providers.base import (
    ModelRequest,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
)
from totem.providers.localserver.edit_formats import (
    WHOLE_FILE_LINES,
    Call,
    SearchReplace,
    Unreadable,
    WholeFile,
    format_for,
)
from totem.providers.localserver.textsteps import text_steps
from totem.run.callguard import CallGuard, guard_calls

CODE = "def add(a, b):\n    return a + b\n"


@pytest.mark.parametrize("reply", [
    f"```python\n{CODE}```",
    f"```\n{CODE}```",
    f"calc.py\n```python\n{CODE}```",
    f"**calc.py**\n```py\n{CODE}```\n",
    f"Here is the new file:\n\ncalc.py\n```python\n{CODE}```\n\nThis adds `add`.",
    f"```python\ncalc.py\n{CODE}```",
    f"~~~python\n{CODE}~~~",
])
def test_a_whole_file_reply_is_read_in_the_forms_small_models_write(reply: str) -> None:
    assert WholeFile().read_reply(reply, "calc.py", complete=True) == [
        Call("write", {"path": "calc.py", "content": CODE})]


@pytest.mark.parametrize("reply", [
    "notes.txt\n```text\n```text\ncurrent notes\n```\n```\n",  # as the 1.5B wrote it
    "notes.txt\n```\n```text\ncurrent notes\n```\n```",
    "```text\n```text\n```text\ncurrent notes\n```\n```\n```",  # twice over
])
def test_a_file_text_wrapped_in_a_second_fence_is_written_without_it(reply: str) -> None:
    assert WholeFile().read_reply(reply, "notes.txt", complete=True) == [
        Call("write", {"path": "notes.txt", "content": "current notes\n"})]


def test_a_markdown_file_that_is_one_code_block_keeps_its_fence() -> None:
    reply = "USAGE.md\n````markdown\n```sh\nmake run\n```\n````\n"
    assert WholeFile().read_reply(reply, "USAGE.md", complete=True) == [
        Call("write", {"path": "USAGE.md", "content": "```sh\nmake run\n```\n"})]


def test_the_block_under_the_path_is_chosen_over_others() -> None:
    reply = (f"Run it with:\n```sh\npython calc.py\n```\n\ncalc.py\n```python\n{CODE}```\n")
    [call] = WholeFile().read_reply(reply, "calc.py", complete=True)  # type: ignore[misc]
    assert call.args["content"] == CODE


def test_a_markdown_file_with_its_own_fences_is_kept_whole() -> None:
    doc = "# Calc\n\nUse it:\n\n```python\nadd(1, 2)\n```\n\nThat is all.\n"
    [call] = WholeFile().read_reply(f"README.md\n```markdown\n{doc}```\n", "README.md",
                                    complete=True)  # type: ignore[misc]
    assert call.args["content"] == doc


def test_an_unclosed_fence_is_the_file_unless_the_reply_was_cut() -> None:
    reply = f"calc.py\n```python\n{CODE}"
    assert WholeFile().read_reply(reply, "calc.py", complete=True) == [
        Call("write", {"path": "calc.py", "content": CODE})]
    cut = WholeFile().read_reply(reply, "calc.py", complete=False)
    assert isinstance(cut, Unreadable) and "cut off" in cut.reason


def test_a_reply_without_a_fence_gets_a_plain_reason() -> None:
    read = WholeFile().read_reply("I added the function add.", "calc.py", complete=True)
    assert isinstance(read, Unreadable)
    assert "no fenced block" in read.reason and "{" not in read.reason


def test_search_replace_blocks_become_edits() -> None:
    reply = ("calc.py\n```python\n<<<<<<< SEARCH\n    return a + b\n=======\n"
             "    return a + b + 0\n>>>>>>> REPLACE\n```\n\nand\n\n"
             "<<<<<<< ORIGINAL\ndef add(a, b):\n=======\ndef add(a, b=0):\n>>>>>>> UPDATED\n")
    assert SearchReplace().read_reply(reply, "calc.py", complete=True) == [
        Call("edit", {"path": "calc.py", "old_string": "    return a + b",
                      "new_string": "    return a + b + 0"}),
        Call("edit", {"path": "calc.py", "old_string": "def add(a, b):",
                      "new_string": "def add(a, b=0):"})]


def test_search_replace_takes_five_to_nine_marker_characters() -> None:
    reply = "<<<<< SEARCH\nx = 1\n=====\nx = 2\n>>>>>>>>> REPLACE\n"
    assert SearchReplace().read_reply(reply, "a.py", complete=True) == [
        Call("edit", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"})]


@pytest.mark.parametrize(("reply", "says"), [
    ("<<<<<<< SEARCH\nx = 1\n>>>>>>> REPLACE\n", "no ======= line"),
    ("<<<<<<< SEARCH\n\n=======\nx = 2\n>>>>>>> REPLACE\n", "SEARCH part is empty"),
    ("I would change x to 2.", "no block of the form"),
])
def test_malformed_search_replace_gets_a_plain_reason(reply: str, says: str) -> None:
    read = SearchReplace().read_reply(reply, "a.py", complete=True)
    assert isinstance(read, Unreadable) and says in read.reason


def test_a_cut_search_replace_block_is_not_applied() -> None:
    read = SearchReplace().read_reply("<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n", "a.py",
                                      complete=False)
    assert isinstance(read, Unreadable) and "cut off" in read.reason


def test_a_long_file_written_whole_instead_of_in_blocks_is_still_taken() -> None:
    assert SearchReplace().read_reply(f"calc.py\n```python\n{CODE}```", "calc.py",
                                      complete=True) == [
        Call("write", {"path": "calc.py", "content": CODE})]


def test_the_format_follows_the_file_s_length() -> None:
    assert isinstance(format_for(None), WholeFile)
    assert isinstance(format_for(WHOLE_FILE_LINES), WholeFile)
    assert isinstance(format_for(WHOLE_FILE_LINES + 1), SearchReplace)
    assert "<<<<<<< SEARCH" in SearchReplace().ask("a.py", exists=True)
    assert "```python" in WholeFile().ask("a.py", exists=False)
    assert "line numbers" in WholeFile().ask("a.py", exists=True)


@pytest.mark.parametrize(("reply", "done"), [
    ("notes.txt\n```text\ncurrent notes\n```\n", True),
    ("notes.txt\n```text\ncurrent notes\n```", False),  # the closing line may go on
    ("```text\ncurrent notes\n```\n", False),  # no path line: a later block may be it
    ("notes.txt\n```markdown\n```sh\nmake\n```\n", False),  # only the inner block closed
])
def test_a_whole_file_reply_is_finished_once_the_block_under_its_path_is_closed(
        reply: str, done: bool) -> None:
    assert WholeFile().finished(reply, "notes.txt") is done
    assert SearchReplace().finished(reply, "notes.txt") is False


class Pulled:
    """A provider that streams each answer in line-sized chunks, counting those pulled."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.pulled = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        text = self.answers.pop(0)
        for line in text.splitlines(keepends=True):
            self.pulled += 1
            yield TextChunk(line)
        yield StreamEnd("stop")


def test_the_text_of_a_write_stops_streaming_after_its_block() -> None:
    block = "notes.txt\n```text\ncurrent notes\n```\n"
    rest = "".join(f"\nother{i}.txt\n```text\nline {i}\n```\n" for i in range(50))
    provider = Pulled('{"tool": "write", "args": {"path": "notes.txt"}}', block + rest)
    request = ModelRequest(model="m", system="s", messages=[
        Message(new_id("msg"), "ses", "user", [TextPart("write notes.txt")])])

    async def go() -> list[StreamEvent]:
        return [e async for e in text_steps(provider, request, engine="llamacpp",
                                            answer_now=False, file_lines=lambda p: 1)]

    events = asyncio.run(go())
    args = [e for e in events if isinstance(e, ToolArgsChunk)]
    assert json.loads("".join(a.text for a in args)) == {
        "path": "notes.txt", "content": "current notes\n"}
    assert provider.pulled == 1 + len(block.splitlines())  # the step, then the block only


def test_a_write_whose_text_loops_is_stopped_and_ends_as_a_call_that_says_why() -> None:
    marks = "-/=<>?!:;'([]{}|~^&*+"
    cycle = "".join(f'    words = words.replace("{m}", " ")\n' for m in marks)
    text = "acronym.py\n```python\ndef abbreviate(words):\n" + cycle * 20
    provider = Pulled('{"tool": "write", "args": {"path": "acronym.py"}}', text)
    request = ModelRequest(model="m", system="s", messages=[
        Message(new_id("msg"), "ses", "user", [TextPart("implement acronym.py")])])

    async def go() -> list[StreamEvent]:
        # through the run's call guard, as in a run: the write must come out as a call
        stream = text_steps(provider, request, engine="llamacpp", answer_now=False,
                            file_lines=lambda p: 2)
        return [e async for e in guard_calls(stream, CallGuard(max_calls=8))]

    events = asyncio.run(go())
    begins = [e for e in events if isinstance(e, ToolCallBegin)]
    assert [b.name for b in begins] == ["write"]
    assert "repeating the same lines" in (begins[0].meta or {}).get("unreadable", "")
    args = json.loads("".join(e.text for e in events if isinstance(e, ToolArgsChunk)))
    assert args == {"path": "acronym.py"}  # nothing to write
    assert provider.pulled < 1 + 3 + len(marks) * 4  # stopped within its fourth copy
