"""ask: a question with options for the person; the run waits for the answer.

With nobody to ask (a headless run) the model is told so and proceeds on its own judgement.
"""

from __future__ import annotations

from typing import ClassVar, TypeVar

from pydantic import BaseModel, Field

from totem.tools.base import ToolContext, ToolError, ToolResult

__all__ = ["NO_ANSWER", "Ask", "AskInput"]

T = TypeVar("T")

NO_ANSWER = (
    "No answer available: the user cannot be asked in this run. Proceed with your best "
    "judgement and say what you assumed."
)


class AskInput(BaseModel):
    question: str = Field(description="One short question.")
    options: list[str] = Field(min_length=2, max_length=6, description="2-6 likely answers.")


class Ask:
    name: ClassVar[str] = "ask"
    description: ClassVar[str] = "Ask the user one question with options; waits for the answer."
    read_only: ClassVar[bool] = True
    Input: ClassVar[type[BaseModel]] = AskInput

    async def run(self, args: AskInput, ctx: ToolContext) -> ToolResult:
        question = args.question.strip()
        options = list(dict.fromkeys(o.strip() for o in args.options if o.strip()))
        if not question:
            raise ToolError("The question is empty.")
        if len(options) < 2:
            raise ToolError("Give at least two different options.")
        if ctx.questions is None:
            return ToolResult(NO_ANSWER, title=question)
        answer = await ctx.abort.until(ctx.questions.ask(question, options, emit=ctx.asks))
        if answer is None:
            return ToolResult(NO_ANSWER, title=question)
        return ToolResult(answer.strip() or "(the user gave an empty answer)", title=question)
