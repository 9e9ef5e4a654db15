from __future__ import annotations

import json

import pytest

from tests.support.tool_calls import Call
from totem.events import Event, TodoUpdated
from totem.tools.base import ToolContext, ToolError, tool_spec
from totem.tools.todo import TodoList, TodoTool


def test_replaces_the_list_and_emits(ctx: ToolContext, call: Call) -> None:
    events: list[Event] = []
    ctx.emit = events.append
    first = call(
        TodoTool(),
        ctx,
        todos=[
            {"content": "Read the parser", "status": "done"},
            {"content": "Fix the bug ", "status": "in_progress"},
            {"content": "Add a test"},
        ],
    )
    assert first.output == "[x] Read the parser\n[>] Fix the bug\n[ ] Add a test"
    assert first.title == "1/3 done"
    second = call(TodoTool(), ctx, todos=[{"content": "Add a test", "status": "completed"}])
    assert second.output == "[x] Add a test"
    assert events == [
        TodoUpdated(
            [
                {"content": "Read the parser", "status": "done"},
                {"content": "Fix the bug", "status": "in_progress"},
                {"content": "Add a test", "status": "pending"},
            ]
        ),
        TodoUpdated([{"content": "Add a test", "status": "done"}]),
    ]
    assert ctx.state.service(TodoList).items == [{"content": "Add a test", "status": "done"}]
    assert call(TodoTool(), ctx, todos=[]).output == "The task list is empty."
    assert events[-1] == TodoUpdated([])


def test_status_spellings_and_errors(ctx: ToolContext, call: Call) -> None:
    result = call(TodoTool(), ctx, todos=[{"content": "a", "status": "In-Progress"}])
    assert result.output == "[>] a"
    with pytest.raises(ToolError, match=r"todos\.0\.status"):
        call(TodoTool(), ctx, todos=[{"content": "a", "status": "someday"}])
    with pytest.raises(ToolError, match=r"todos\.0\.content"):
        call(TodoTool(), ctx, todos=[{"content": "", "status": "pending"}])


def test_without_an_event_sink(ctx: ToolContext, call: Call) -> None:
    assert call(TodoTool(), ctx, todos=[{"content": "a"}]).output == "[ ] a"


def test_schema_is_inline_and_short() -> None:
    spec = tool_spec(TodoTool())
    assert "$defs" not in json.dumps(spec.parameters)
    assert spec.parameters["properties"]["todos"]["items"]["required"] == ["content"]
    assert len(json.dumps([spec.name, spec.description, spec.parameters])) < 520
