"""todo: the visible task list, replaced whole by each call (as Claude Code's TodoWrite).

The list lives in a session service; every change is emitted as `TodoUpdated` for the
clients to show. Common spellings of a status ("completed", "in-progress") are accepted.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator

from totem.events import TodoUpdated
from totem.tools.base import ToolContext, ToolResult

__all__ = ["TodoInput", "TodoItem", "TodoList", "TodoTool"]

Status = Literal["pending", "in_progress", "done"]
_ALIASES = {
    "completed": "done",
    "complete": "done",
    "finished": "done",
    "in-progress": "in_progress",
    "in progress": "in_progress",
    "inprogress": "in_progress",
    "active": "in_progress",
    "todo": "pending",
    "not_started": "pending",
}
_MARKS: dict[str, str] = {"done": "[x]", "in_progress": "[>]", "pending": "[ ]"}


class TodoItem(BaseModel):
    content: str = Field(min_length=1, description="The task.")
    status: Status = "pending"

    @field_validator("status", mode="before")
    @classmethod
    def _alias(cls, value: object) -> object:
        if isinstance(value, str):
            key = value.strip().lower()
            return _ALIASES.get(key, key)
        return value


class TodoInput(BaseModel):
    todos: list[TodoItem] = Field(description="The whole list, in order.")

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The item schema inline: shorter, and plainer for small models than a `$ref`."""
        schema = super().model_json_schema(*args, **kwargs)
        item = schema.pop("$defs", {}).get("TodoItem")
        if item is not None:
            schema["properties"]["todos"]["items"] = item
        return schema


class TodoList:
    """A session's task list."""

    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    def replace(self, items: list[TodoItem]) -> list[dict[str, str]]:
        self.items = [{"content": i.content.strip(), "status": i.status} for i in items]
        return [dict(item) for item in self.items]


class TodoTool:
    name: ClassVar[str] = "todo"
    description: ClassVar[str] = (
        "Set the visible task list for multi-step work (replaces it; one in_progress)."
    )
    read_only: ClassVar[bool] = False
    Input: ClassVar[type[BaseModel]] = TodoInput

    async def run(self, args: TodoInput, ctx: ToolContext) -> ToolResult:
        todos = ctx.state.service(TodoList).replace(args.todos)
        if ctx.emit is not None:
            ctx.emit(TodoUpdated(todos))
        done = sum(1 for t in todos if t["status"] == "done")
        return ToolResult(render(todos), title=f"{done}/{len(todos)} done")


def render(todos: list[dict[str, str]]) -> str:
    """`[x] done`, `[>] in progress`, `[ ] pending`, one a line."""
    if not todos:
        return "The task list is empty."
    return "\n".join(f"{_MARKS.get(t['status'], '[ ]')} {t['content']}" for t in todos)
