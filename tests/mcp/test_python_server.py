"""Against a server written with the Python `mcp` SDK (tests/mcp/pyserver.py), run as a
subprocess over stdio: tools, elicitation, sampling, progress, the protocol choice, a call
that times out, and a server that dies in the middle of a call."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.support.mcp_servers import Person, by_name, new_mark, python_server
from tests.support.processes import processes_with
from totem.events import QuestionAsked, ToolProgress
from totem.mcp.elicitation import ANSWER
from totem.mcp.manager import McpManager
from totem.mcp.sampling import ProviderSampler
from totem.testing.scripted import ScriptedProvider, reply
from totem.tools.base import ToolError


def manager_for(person: Person, tmp: Path, **servers: object) -> McpManager:
    return McpManager(
        tmp,
        servers,
        permission=person.permission,
        questions=person.questions,  # type: ignore[arg-type]
        log_dir=tmp / "logs",
    )


def colour_answers(question: QuestionAsked) -> str:
    if ANSWER in question.options:
        return ANSWER
    return "red" if question.question.startswith("Color") else ""  # shade: the default


def test_tools_progress_and_elicitation_on_the_handshake_protocol(tmp_path: Path) -> None:
    person = Person(tmp_path, answer=colour_answers)
    mark = new_mark()

    async def main() -> None:
        async with manager_for(person, tmp_path, py=python_server(mark)) as manager:
            assert manager.status()[0].protocol == "2025-11-25"
            tools = by_name(manager.tools)
            assert set(tools) >= {"py__add", "py__ask_color", "py__slow", "py__whoami"}
            add = await person.call(tools["py__add"], a=2, b=40)
            assert add.output.splitlines()[0] == "42"
            assert '"result": 42' in add.output  # structured content, shown once
            with_bad = tools["py__add"]
            try:
                await person.call(with_bad, a="two", b=1)
            except ToolError as exc:
                assert "'two' is not of type 'integer'" in str(exc)
            else:
                raise AssertionError("a wrong argument type must be refused")

            slow = await person.call(tools["py__slow"], steps=3)
            assert slow.output.startswith("did 3 steps")
            assert [p.message for p in person.of(ToolProgress)] == ["step 1", "step 2", "step 3"]

            colour = await person.call(tools["py__ask_color"])
            assert colour.output.startswith("accepted red 3")
            fields = [q.question for q in person.of(QuestionAsked)][1:]
            assert fields[0].startswith("Color: a colour (default blue)")

            where = await person.call(tools["py__whoami"])
            assert str(tmp_path.resolve()) in where.output  # started in the project root
            assert processes_with(mark)

    asyncio.run(main())
    assert processes_with(mark) == []


def test_sampling_is_served_by_the_model_only_when_allowed(tmp_path: Path) -> None:
    provider = ScriptedProvider([reply("A short summary.")])

    async def main(person: Person) -> str:
        manager = manager_for(person, tmp_path, py=python_server(new_mark()))
        manager.sampler = ProviderSampler(provider, "small-model", label="local/small-model")
        async with manager:
            tool = by_name(manager.tools)["py__summarize"]
            try:
                return (await person.call(tool, text="a long text")).output
            except ToolError as exc:
                return f"error: {exc}"

    allowed = asyncio.run(main(Person(tmp_path)))
    assert allowed.startswith("model local/small-model said: A short summary.")
    request = provider.requests[0]
    assert request.system == "Summarize." and request.max_tokens == 50
    assert request.messages[0].text() == "a long text"

    refused = asyncio.run(main(Person(tmp_path, replies={"mcp-sampling": "reject"})))
    assert refused.startswith("error:") and "Sampling was refused" in refused


def test_the_stateless_protocol_can_be_chosen_and_loses_elicitation(tmp_path: Path) -> None:
    person = Person(tmp_path, answer=colour_answers)

    async def main() -> None:
        server = python_server(new_mark(), protocol="auto")
        async with manager_for(person, tmp_path, py=server) as manager:
            assert manager.status()[0].protocol == "2026-07-28"
            tools = by_name(manager.tools)
            assert (await person.call(tools["py__add"], a=1, b=2)).output.startswith("3")
            try:
                await person.call(tools["py__ask_color"])
            except ToolError as exc:
                assert "back-channel" in str(exc)
            else:
                raise AssertionError("elicitation has no back-channel on 2026-07-28")

    asyncio.run(main())


def test_a_call_that_takes_too_long_is_a_tool_error_and_the_server_goes_on(
    tmp_path: Path,
) -> None:
    person = Person(tmp_path)

    async def main() -> None:
        server = python_server(new_mark(), timeout=0.5)
        async with manager_for(person, tmp_path, py=server) as manager:
            tools = by_name(manager.tools)
            try:
                await person.call(tools["py__hang"], seconds=30)
            except ToolError as exc:
                assert "did not answer the call to hang within 0.5 s" in str(exc)
            else:
                raise AssertionError("the call should have timed out")
            assert (await person.call(tools["py__add"], a=1, b=1)).output.startswith("2")

    asyncio.run(main())


def test_a_server_that_dies_during_a_call_gives_a_clear_tool_error(tmp_path: Path) -> None:
    person = Person(tmp_path)
    mark = new_mark()

    async def main() -> None:
        async with manager_for(person, tmp_path, py=python_server(mark)) as manager:
            tools = by_name(manager.tools)
            try:
                await person.call(tools["py__crash"])
            except ToolError as exc:
                text = str(exc)
                assert "The MCP server 'py' stopped while crash was running" in text
                assert "started again when one of its tools is used next" in text
                assert "pyserver: crashing on purpose" in text  # its stderr, shown
            else:
                raise AssertionError("the crash must be a tool error")
            assert manager.status()[0].state == "crashed"
            after = (await person.call(tools["py__add"], a=1, b=1)).output
            assert "had stopped (it stopped while crash was running)" in after
            assert manager.status()[0].state == "ready"

    asyncio.run(main())
    assert processes_with(mark) == []


def test_an_aborted_call_is_cancelled_and_the_server_stays_usable(tmp_path: Path) -> None:
    person = Person(tmp_path)

    async def main() -> None:
        async with manager_for(person, tmp_path, py=python_server(new_mark())) as manager:
            tools = by_name(manager.tools)
            call = asyncio.ensure_future(person.call(tools["py__hang"], seconds=30))
            await asyncio.sleep(0.5)
            call.cancel()  # what an abort does to the run's task
            try:
                await call
            except asyncio.CancelledError:
                pass
            else:
                raise AssertionError("the call should have been cancelled")
            assert (await person.call(tools["py__add"], a=2, b=2)).output.startswith("4")

    asyncio.run(main())
