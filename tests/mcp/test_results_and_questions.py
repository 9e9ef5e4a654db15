"""What MCP results become for the model, and elicitation forms as questions."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import mcp_types as types

from totem.events import Event, QuestionAsked
from totem.mcp.elicitation import ANSWER, DECLINE, OPENED, elicit
from totem.mcp.tool import render_result
from totem.policy.questions import QuestionService


def test_every_kind_of_content_is_mapped() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(text="first"),
            types.ImageContent(data="iVBORw0KGgo=", mime_type="image/png"),
            types.AudioContent(data="AAAA", mime_type="audio/wav"),
            types.ResourceLink(
                name="notes", uri="file:///notes.txt", mime_type="text/plain", description="mine"
            ),
            types.EmbeddedResource(
                resource=types.TextResourceContents(
                    uri="mem://a", text="inside", mime_type="text/x"
                )
            ),
            types.EmbeddedResource(
                resource=types.BlobResourceContents(
                    uri="mem://b", blob="R0lG", mime_type="image/gif"
                )
            ),
            types.EmbeddedResource(
                resource=types.BlobResourceContents(uri="mem://c", blob="AAAAAAAA")
            ),
        ],
        structured_content={"answer": 42},
    )
    text, images = render_result(result)
    assert [(i.media_type, i.data) for i in images] == [
        ("image/png", "iVBORw0KGgo="),
        ("image/gif", "R0lG"),
    ]
    assert text.splitlines() == [
        "first",
        "[audio (audio/wav, about 3 bytes), not shown]",
        "[resource link] notes: file:///notes.txt (text/plain) — mine",
        "[resource mem://a (text/x)]",
        "inside",
        "[resource mem://b: image below]",
        "[resource mem://c: binary, about 6 bytes, not shown]",
        "Structured content:",
        "{",
        '  "answer": 42',
        "}",
    ]


def test_structured_content_already_given_as_text_is_not_repeated() -> None:
    result = types.CallToolResult(
        content=[types.TextContent(text='{"a": 1, "b": [2]}')],
        structured_content={"b": [2], "a": 1},
    )
    assert render_result(result) == ('{"a": 1, "b": [2]}', [])
    assert render_result(types.CallToolResult(content=[])) == ("(no output)", [])


def ask_with(
    answers: Iterator[str | None], params: types.ElicitRequestParams
) -> tuple[types.ElicitResult, list[QuestionAsked]]:
    """Run an elicitation with a person who gives `answers` in order."""
    asked: list[QuestionAsked] = []

    async def main() -> types.ElicitResult:
        service = QuestionService(interactive=True)
        loop = asyncio.get_running_loop()

        def emit(event: Event) -> None:
            assert isinstance(event, QuestionAsked)
            asked.append(event)
            loop.call_soon(service.reply, event.request_id, next(answers))

        service.emit = emit
        return await elicit("srv", params, service)

    return asyncio.run(main()), asked


FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2},
        "age": {"type": "integer", "minimum": 0, "default": 30},
        "tags": {"type": "array", "items": {"enum": ["x", "y", "z"]}, "minItems": 1},
        "level": {
            "type": "string",
            "oneOf": [{"const": "lo", "title": "Low"}, {"const": "hi", "title": "High"}],
        },
        "ok": {"type": "boolean"},
        "note": {"type": "string"},
    },
    "required": ["name", "level"],
}


def form(message: str = "Tell me") -> types.ElicitRequestFormParams:
    return types.ElicitRequestFormParams(message=message, requested_schema=FORM)


def test_a_form_is_asked_field_by_field_with_types_checked() -> None:
    answers = iter([ANSWER, "A", "Ada", "", "x, z", "High", "yes", "(skip)"])
    result, asked = ask_with(answers, form())
    assert result.action == "accept"
    assert result.content == {
        "name": "Ada",
        "age": 30,
        "tags": ["x", "z"],
        "level": "hi",
        "ok": True,
    }
    assert asked[0].question.startswith("The MCP server 'srv' asks: Tell me")
    assert asked[0].options == [ANSWER, DECLINE] and not asked[0].allow_free
    assert asked[2].question.startswith("That answer does not fit (at least 2 characters). ")
    assert asked[3].options == ["30"]  # the default, offered first
    assert asked[5].options == ["Low", "High"] and not asked[5].allow_free
    assert asked[7].options == ["(skip)"]


def test_a_wrong_answer_three_times_or_none_cancels_and_decline_declines() -> None:
    result, _ = ask_with(iter([ANSWER, "x", "y", "z"]), form())
    assert result.action == "cancel"
    result, _ = ask_with(iter([None]), form())
    assert result.action == "cancel"
    result, asked = ask_with(iter([DECLINE]), form())
    assert result.action == "decline" and len(asked) == 1
    headless = QuestionService(interactive=False)  # nobody to ask
    assert asyncio.run(elicit("srv", form(), headless)).action == "cancel"


def test_an_address_to_open_is_asked_as_consent() -> None:
    params = types.ElicitRequestURLParams(
        message="Sign in, please.", url="https://example.org/login", elicitation_id="e1"
    )
    result, asked = ask_with(iter([OPENED]), params)
    assert result.action == "accept" and result.content is None
    assert "https://example.org/login" in asked[0].question
    result, _ = ask_with(iter([DECLINE]), params)
    assert result.action == "decline"
