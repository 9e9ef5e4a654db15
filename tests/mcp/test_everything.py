"""Against @modelcontextprotocol/server-everything (a server nobody here wrote), over stdio,
streamable HTTP and the older SSE transport: the start question, tools with their schemas,
one call each of echo, progress, an image, structured content, resource links, elicitation
answered through the question flow, and the project root as the roots."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.mcp_servers import (
    Person,
    by_name,
    everything_stdio,
    new_mark,
    running_everything_http,
)
from tests.support.processes import processes_with
from totem.events import PermissionAsked, QuestionAsked, ToolProgress
from totem.mcp.config import ServerConfig
from totem.mcp.elicitation import ANSWER
from totem.mcp.manager import McpManager
from totem.tools.base import ToolError


@pytest.fixture(params=["stdio", "http", "sse"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerConfig]:
    if request.param == "stdio":
        yield everything_stdio(new_mark())
    else:
        sse = request.param == "sse"
        with running_everything_http(tmp_path, name="everything", sse=sse) as config:
            yield config


def answer_form(question: QuestionAsked) -> str:
    """A person filling in server-everything's form: a name, "no" to the terms, the
    default for everything else that has one, and "(skip)" for the rest."""
    if ANSWER in question.options:
        return ANSWER
    if question.question.startswith("String: Your full, legal name"):
        return "Ada Lovelace"
    if question.question.startswith("Boolean:"):
        return "no"
    marked = [o for o in question.options if o.endswith("(default)")]
    if marked:
        return marked[0]
    return question.options[0] if question.options else ""


def test_everything_server_tools_through_totem(server: ServerConfig, tmp_path: Path) -> None:
    person = Person(tmp_path, answer=answer_form)

    async def main() -> None:
        manager = McpManager(
            tmp_path,
            {"everything": server},
            permission=person.permission,
            questions=person.questions,
            log_dir=tmp_path / "logs",
        )
        async with manager:
            start = person.of(PermissionAsked)[0]
            assert (start.permission, start.patterns) == ("mcp-start", ["everything"])
            target = "dist/index.js stdio" if server.kind == "stdio" else server.url  # type: ignore[union-attr]
            assert target in start.title
            tools = by_name(manager.tools)
            echo = tools["everything__echo"]
            spec = echo.spec()  # type: ignore[attr-defined]
            assert spec.parameters["properties"]["message"]["type"] == "string"
            assert spec.parameters["required"] == ["message"] and "$schema" not in spec.parameters
            assert "everything__trigger-elicitation-request" in tools  # declared capability

            result = await person.call(echo, message="hello")
            assert result.output == "Echo: hello" and result.title == "everything: echo"
            asked = person.of(PermissionAsked)[-1]
            assert (asked.permission, asked.patterns) == ("mcp", ["everything__echo"])

            with pytest.raises(ToolError, match="'message' is a required property"):
                await person.call(echo)

            long = tools["everything__trigger-long-running-operation"]
            result = await person.call(long, duration=0.3, steps=3)
            assert "Long running operation completed" in result.output
            progress = person.of(ToolProgress)
            assert [(p.progress, p.total) for p in progress] == [(1, 3), (2, 3), (3, 3)]
            assert {p.name for p in progress} == {"everything__trigger-long-running-operation"}

            image = await person.call(tools["everything__get-tiny-image"])
            assert len(image.images) == 1 and image.images[0].media_type == "image/png"
            assert image.images[0].data.startswith("iVBOR")

            weather = await person.call(
                tools["everything__get-structured-content"], location="Chicago"
            )
            assert '"temperature"' in weather.output and '"humidity"' in weather.output

            links = await person.call(tools["everything__get-resource-links"], count=2)
            assert "[resource link]" in links.output and "demo://resource/" in links.output

            roots = await person.call(tools["everything__get-roots-list"])
            assert tmp_path.resolve().as_uri() in roots.output

            form = await person.call(tools["everything__trigger-elicitation-request"])
            asked_form = person.of(QuestionAsked)
            assert "everything" in asked_form[0].question
            assert "Please provide inputs" in asked_form[0].question
            assert "User provided the requested information" in form.output
            assert "Name: Ada Lovelace" in form.output and "Agreed to terms: false" in form.output
            assert '"integer": 42' in form.output  # a default taken

    asyncio.run(main())
    if server.kind == "stdio":
        mark = server.env["TOTEM_TEST_MARK"].reveal()  # type: ignore[union-attr]
        assert mark is not None and processes_with(mark) == []


def test_elicitation_declined_or_unanswered(tmp_path: Path) -> None:
    decline = Person(tmp_path, answer=lambda q: "Decline")
    nobody = Person(tmp_path, answer=lambda q: None)

    async def main(person: Person) -> str:
        config = everything_stdio(new_mark())
        async with McpManager(
            tmp_path,
            {"everything": config},
            permission=person.permission,
            questions=person.questions,
            log_dir=tmp_path / "logs",
        ) as manager:
            tool = by_name(manager.tools)["everything__trigger-elicitation-request"]
            return (await person.call(tool)).output

    assert "declined" in asyncio.run(main(decline))
    assert "cancelled" in asyncio.run(main(nobody))
