from __future__ import annotations

import asyncio

import pytest

from tests.support.tool_calls import Call
from totem.abort import Aborted
from totem.events import Event, QuestionAsked
from totem.policy.questions import QuestionService
from totem.tools.ask import NO_ANSWER, Ask, AskInput
from totem.tools.base import ToolContext, ToolError


def test_waits_for_the_answer(ctx: ToolContext, call: Call) -> None:
    asked: list[QuestionAsked] = []

    def answer(event: Event) -> None:
        assert isinstance(event, QuestionAsked)
        asked.append(event)
        asyncio.get_running_loop().call_later(0.05, questions.reply, event.request_id, "SQLite")

    questions = QuestionService(interactive=True, emit=answer)
    ctx.questions = questions
    result = call(Ask(), ctx, question="Which database? ", options=["SQLite", "Postgres", " "])
    assert result.output == "SQLite"
    assert result.title == "Which database?"
    assert [(a.question, a.options, a.allow_free) for a in asked] == [
        ("Which database?", ["SQLite", "Postgres"], True)
    ]
    assert questions.pending() == []


def test_free_text_answer(ctx: ToolContext, call: Call) -> None:
    def answer(event: Event) -> None:
        assert isinstance(event, QuestionAsked)
        questions.reply(event.request_id, "MySQL, please")

    questions = QuestionService(interactive=True, emit=answer)
    ctx.questions = questions
    assert call(Ask(), ctx, question="Which?", options=["a", "b"]).output == "MySQL, please"


def test_nobody_to_ask(ctx: ToolContext, call: Call) -> None:
    assert call(Ask(), ctx, question="Which?", options=["a", "b"]).output == NO_ANSWER
    ctx.questions = QuestionService(interactive=False, emit=lambda event: None)
    assert call(Ask(), ctx, question="Which?", options=["a", "b"]).output == NO_ANSWER
    assert NO_ANSWER.startswith("No answer available: the user cannot be asked in this run.")


def test_options_are_checked(ctx: ToolContext, call: Call) -> None:
    with pytest.raises(ToolError, match="options"):
        call(Ask(), ctx, question="Which?", options=["only"])
    with pytest.raises(ToolError, match="options"):
        call(Ask(), ctx, question="Which?", options=[str(n) for n in range(7)])
    with pytest.raises(ToolError, match="two different options"):
        call(Ask(), ctx, question="Which?", options=["same", "same "])
    with pytest.raises(ToolError, match="question is empty"):
        call(Ask(), ctx, question=" ", options=["a", "b"])


def test_abort_while_waiting(ctx: ToolContext) -> None:
    questions = QuestionService(interactive=True, emit=lambda event: None)
    ctx.questions = questions
    ctx.tool_name = "ask"

    async def scenario() -> None:
        args = AskInput(question="Which?", options=["a", "b"])
        task = asyncio.create_task(Ask().run(args, ctx))
        await asyncio.sleep(0.05)
        assert len(questions.pending()) == 1
        ctx.abort.abort()
        with pytest.raises(Aborted):
            await task
        assert questions.pending() == []

    asyncio.run(scenario())
