"""A whole run against a server that answers like llama-server serving a model as `local`.

The server is real HTTP on 127.0.0.1 (tests/support/llama_like.py); totem asks its /props,
picks the small-model handling from the model file's name, and the loop does the rest.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.llama_like import Answer, LlamaLike, delta, sse, whole
from totem.abort import AbortSignal
from totem.events import Event, Notice, RunFinished, ToolEnd, ToolStart
from totem.session.service import SessionService
from totem.settings.config import Config, ProviderConfig
from totem.store.sqlite import SqliteStore

OVERFLOW_NEWER = json.dumps({"error": {
    "code": 400, "message": "the request exceeds the available context size, try increasing it",
    "type": "exceed_context_size_error", "n_prompt_tokens": 9120, "n_ctx": 8192}}).encode()


def _run(tmp: Path, base_url: str, text: str, *, options: dict[str, Any] | None = None,
         models: dict[str, Any] | None = None, history: int = 0,
         model: str = "local", files: dict[str, str] | None = None) -> list[Event]:
    root = tmp / "project"
    root.mkdir(exist_ok=True)
    (root / "README.md").write_text("# Marmalade\n\nA tiny jam-making library.\n")
    for name, content in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    pconf = ProviderConfig("local", "openai", base_url=base_url, options=options or {},
                           models=models or {})
    config = Config(model=f"local/{model}", providers={"local": pconf})
    store = SqliteStore(tmp / "store.db")

    async def go() -> list[Event]:
        service = SessionService(root, mode="yes", config=config, store=store)
        try:
            session = service.open()
            for i in range(history):  # earlier turns that fill the window
                store_text = f"earlier question {i}: " + "words " * 1500
                from totem.messages import Message, TextPart, new_id

                store.add_message(Message(new_id("msg"), session.id, "user",
                                          [TextPart(store_text)]))
            return [e async for e in service.run(session, text, abort=AbortSignal())]
        finally:
            await service.aclose()

    try:
        return asyncio.run(go())
    finally:
        store.close()


def _step(content: str) -> Answer:
    """A constrained answer as llama-server streams it: the JSON in a few pieces."""
    cut = len(content) // 2
    return Answer(200, sse(delta(content[:cut]), delta(content[cut:]), delta(finish="stop")),
                  "text/event-stream")


def _of(events: Sequence[Event], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def test_constrained_steps_run_tools_and_the_run_ends(tmp_path: Path) -> None:
    answers = [_step('{"tool": "read", "args": {"path": "README.md"}}'),
               _step('{"answer": "The project is Marmalade."}')]
    with LlamaLike(answers) as server:
        events = _run(tmp_path, server.base_url, "What is the project's name?",
                      options={"read_ahead": False})
        bodies = server.bodies
    first = bodies[0]
    assert "tools" not in first and first["response_format"]["type"] == "json_schema"
    assert first["temperature"] == 0.2
    assert 256 <= first["max_tokens"] <= 2048
    starts, ends = _of(events, ToolStart), _of(events, ToolEnd)
    assert [(s.name, s.input) for s in starts] == [("read", {"path": "README.md"})]
    assert "Marmalade" in ends[0].output
    second = bodies[1]["messages"]
    assert json.loads(second[-2]["content"]) == {"tool": "read", "args": {"path": "README.md"}}
    assert second[-1]["content"].startswith('Result of read {"path": "README.md"}:')
    assert events[-1] == RunFinished("finished", "", 2, events[-1].usage)


def test_the_files_are_read_ahead_and_a_change_must_be_a_call(tmp_path: Path) -> None:
    answers = [_step('{"tool": "edit", "args": {"path": "README.md", "old_string": "jam", '
                     '"new_string": "marmalade"}}'),
               _step('{"answer": "Done: README.md says marmalade-making."}')]
    with LlamaLike(answers) as server:
        events = _run(tmp_path, server.base_url, "Change jam to marmalade in the README.")
        bodies = server.bodies
    first = bodies[0]["messages"]
    # before its first step the model has the listing and the file, as calls of its own
    assert json.loads(first[-2]["content"].splitlines()[0]) == {
        "tool": "glob", "args": {"pattern": "**/*"}}
    assert "A tiny jam-making library." in first[-1]["content"]
    assert "The request is: Change jam to marmalade in the README." in first[-1]["content"]
    # asked for a change, the first step may not be an answer
    options = bodies[0]["response_format"]["json_schema"]["schema"]["anyOf"]
    assert all("tool" in o["properties"] for o in options)
    assert "answer" in json.dumps(bodies[1]["response_format"])
    assert [s.name for s in _of(events, ToolStart)] == ["glob", "read", "edit"]
    assert "marmalade-making" in (tmp_path / "project" / "README.md").read_text()
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "finished"


@pytest.mark.parametrize("request_text", [
    "What kind of library is this project?",
    "What does this project do? Answer in one or two sentences.",
    # the real 0.5B model edited the test file when asked this
    "Run this project's tests and tell me how many of them fail.",
])
def test_a_request_that_changes_nothing_is_offered_no_tool_that_changes_files(
    tmp_path: Path, request_text: str
) -> None:
    answers = [_step('{"answer": "It is a jam-making library."}')] * 3
    with LlamaLike(answers) as server:
        _run(tmp_path, server.base_url, request_text)
        body = server.bodies[0]
    offered = [o["properties"]["tool"]["const"]
               for o in body["response_format"]["json_schema"]["schema"]["anyOf"]
               if "tool" in o["properties"]]
    assert "read" in offered and "grep" in offered and "bash" in offered
    assert "edit" not in offered and "write" not in offered
    assert "- edit(" not in body["messages"][0]["content"]


def test_asked_to_run_the_tests_totem_runs_them_and_the_first_step_is_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real 0.5B, shown the test file, read it again and again; shown the run's output
    and asked for the answer, it gave the count."""
    import os
    import sys

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    tests = ("def test_one():\n    assert 1 + 1 == 2\n\n\n"
             "def test_two():\n    assert 2 * 2 == 5\n")
    answers = [_step('{"answer": "1 failed, 1 passed."}')]
    with LlamaLike(answers) as server:
        events = _run(tmp_path, server.base_url,
                      "Run this project's tests and tell me how many of them fail.",
                      files={"tests/test_jam.py": tests})
        body = server.bodies[0]
    assert [(s.name, s.input) for s in _of(events, ToolStart)] == [
        ("glob", {"pattern": "**/*"}),
        ("bash", {"command": "python -m pytest -q -p no:cacheprovider --tb=no"})]
    options = body["response_format"]["json_schema"]["schema"]["anyOf"]
    assert options == [{"type": "object", "properties": {"answer": {"type": "string"}},
                        "required": ["answer"], "additionalProperties": False}]
    last = body["messages"][-1]["content"]
    assert "1 failed, 1 passed" in last and "how many passed, how many failed" in last
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "finished"


def test_held_steps_drop_the_warning_that_the_model_calls_tools_badly(tmp_path: Path) -> None:
    def warned(options: dict[str, Any]) -> bool:
        answers = [_step('{"answer": "Hello."}')]
        with LlamaLike(answers) as server:
            events = _run(tmp_path, server.base_url, "hi", options=options,
                          model="qwen2.5-coder-0.5b-instruct")
        return any("known not to call tools reliably" in n.text for n in _of(events, Notice))

    assert warned({"tool_mode": "native"})
    assert not warned({})


def test_native_mode_sends_tools_and_is_still_bounded(tmp_path: Path) -> None:
    answers = [Answer(200, sse(delta("Hello."), delta(finish="stop")), "text/event-stream")]
    with LlamaLike(answers) as server:
        events = _run(tmp_path, server.base_url, "hi", options={"tool_mode": "native"})
        body = server.bodies[0]
    assert body["tools"] and "response_format" not in body
    assert body["temperature"] == 0.2 and body["max_tokens"] <= 2048
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "finished"


def test_repeated_native_calls_end_the_answer_and_the_model_is_told(tmp_path: Path) -> None:
    call = {"index": 0, "id": "c", "type": "function",
            "function": {"name": "read", "arguments": '{"path": "README.md"}'}}
    repeated = [delta(calls=[{**call, "index": i, "id": f"c{i}"}]) for i in range(40)]
    answers = [Answer(200, sse(*repeated, delta(finish="tool_calls")), "text/event-stream"),
               Answer(200, sse(delta("It is Marmalade."), delta(finish="stop")),
                      "text/event-stream")]
    with LlamaLike(answers) as server:
        events = _run(tmp_path, server.base_url, "name?", options={"tool_mode": "native"})
        second = server.bodies[1]["messages"]
    assert len(_of(events, ToolStart)) == 1
    notices = [n.text for n in _of(events, Notice)]
    assert any("repeated call(s) were dropped and the answer was stopped" in n for n in notices)
    assert "never the same call twice" in second[-1]["content"]
    assert events[-1].reason == "finished"


def test_a_request_past_the_window_is_compacted_and_asked_again(tmp_path: Path) -> None:
    # our estimate fits the 8,192 tokens /props gave; the server counts more and refuses
    answers = [Answer(400, OVERFLOW_NEWER),
               _step("Earlier the person asked questions."),  # the summary
               _step('{"answer": "Done."}')]
    with LlamaLike(answers) as server:
        events = _run(tmp_path, server.base_url, "summarise", history=1)
        bodies = server.bodies
    assert len(bodies) == 3
    assert "summary" in bodies[1]["messages"][0]["content"]
    assert len(json.dumps(bodies[2]["messages"])) < len(json.dumps(bodies[0]["messages"])) // 2
    notices = [n.text for n in _of(events, Notice)]
    assert any("did not fit the model's window" in n for n in notices)
    assert events[-1].reason == "finished"


def test_a_server_that_breaks_off_midway_is_asked_for_a_whole_answer(tmp_path: Path) -> None:
    call = {"index": 0, "id": "c0", "type": "function",
            "function": {"name": "read", "arguments": '{"pa'}}
    broken = Answer(200, sse(delta("I will read it."), delta(calls=[call]), done=False),
                    "text/event-stream", cut=True)
    answers = [broken, Answer(200, whole("It is Marmalade."))]
    with LlamaLike(answers) as server:
        events = _run(tmp_path, server.base_url, "name?", options={"tool_mode": "native"})
        bodies = server.bodies
    assert bodies[0]["stream"] is True and bodies[1]["stream"] is False
    assert "stream_options" not in bodies[1]
    notices = [n.text for n in _of(events, Notice)]
    assert any("failed during the answer" in n for n in notices), notices
    assert not _of(events, ToolStart)  # the broken call is not run
    assert events[-1].reason == "finished"


def test_the_first_change_goes_where_the_request_says_and_a_given_line_done_is_answered(
    tmp_path: Path,
) -> None:
    """The real 0.5B, asked to create NOTES.md with one given line, edited README.md (the
    file it was shown) three times; held to writing NOTES.md it wrote the line, then edited
    it twenty times ("the 14th", "the 15th" ...) until it was told to say what was done."""
    line = "Release 4.2 ships on Friday the 13th."
    answers = [_step(json.dumps({"tool": "write", "args": {"path": "NOTES.md",
                                                           "content": line}})),
               _step('{"answer": "NOTES.md holds the line."}')]
    with LlamaLike(answers) as server:
        events = _run(tmp_path, server.base_url,
                      f"Create a file named NOTES.md that contains exactly this one line: {line}")
        first, second = server.bodies
    options = first["response_format"]["json_schema"]["schema"]["anyOf"]
    assert [(o["properties"]["tool"]["const"], o["properties"]["args"]["properties"]["path"])
            for o in options] == [("write", {"enum": ["NOTES.md"]})]
    done = second["response_format"]["json_schema"]["schema"]["anyOf"]
    assert [list(o["properties"]) for o in done] == [["answer"]]
    assert "That did what the request asks" in second["messages"][-1]["content"]
    assert (tmp_path / "project" / "NOTES.md").read_text().strip() == line
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "finished"
