"""The `task` tool: hands a whole task to a sub-agent and returns its final answer."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from totem.run.subagents import SubagentRunner, describe
from totem.tools.base import ToolContext, ToolResult

__all__ = ["Task", "TaskInput"]


class TaskInput(BaseModel):
    agent: str = Field(description="Which agent to start.")
    prompt: str = Field(description="The whole task. The agent sees nothing else.")
    description: str = Field("", description="A 3-5 word label for the task.")


class Task:
    name: ClassVar[str] = "task"
    kind: ClassVar[str] = "task"
    read_only: ClassVar[bool] = False
    parallel: ClassVar[bool] = True  # several tasks of one answer run together (3 at most)
    Input: ClassVar[type[BaseModel]] = TaskInput

    def __init__(self, runner: SubagentRunner, agents: dict[str, str]) -> None:
        self.runner = runner
        self.description = describe(agents)

    async def run(self, args: TaskInput, ctx: ToolContext) -> ToolResult:
        return await self.runner.run(args.agent, args.prompt, ctx)
