"""Resources and prompts of a real server (server-everything over stdio): `@server:uri`
attaches a resource, `/server:prompt` sends a prompt with its arguments, and the lists they
complete from; wrong input is a clear error."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.support.mcp_servers import Person, everything_stdio, new_mark, python_server
from totem.mcp.manager import McpManager
from totem.mcp.mentions import McpInputError, completions, expand_input, mentions_mcp

DOC = "demo://resource/static/document/architecture.md"


def test_mentions_and_prompts_of_a_real_server(tmp_path: Path) -> None:
    person = Person(tmp_path, mode="yes")

    async def main() -> None:
        async with McpManager(tmp_path, {"everything": everything_stdio(new_mark())},
                              permission=person.permission, log_dir=tmp_path / "logs") as m:
            words = completions(m)
            assert f"@everything:{DOC}" in words
            assert "/everything:args-prompt" in words and "/everything:simple-prompt" in words

            attached = await expand_input(m, f"what is @everything:{DOC}, briefly?")
            assert attached is not None and attached.attached == [f"everything:{DOC}"]
            text = attached.model_text
            assert text.startswith(f"what is @everything:{DOC}, briefly?\n\n")
            assert f'<resource server="everything" uri="{DOC}">' in text
            assert "# Everything Server – Architecture" in text

            assert await expand_input(m, "mail me@example.org:25 or @nowhere:x") is None

            simple = await expand_input(m, "/everything:simple-prompt")
            assert simple is not None
            assert simple.model_text == "This is a simple prompt without arguments."
            by_order = await expand_input(m, "/everything:args-prompt Paris")
            by_name = await expand_input(m, '/everything:args-prompt city=Paris state="Ile de F"')
            assert by_order is not None and "Paris" in by_order.model_text
            assert by_name is not None and "Ile de F" in by_name.model_text

            with pytest.raises(McpInputError, match="needs city: /everything:args-prompt "
                               r"city=… \[state=…\]"):
                await expand_input(m, "/everything:args-prompt")
            with pytest.raises(McpInputError, match="has no prompt 'nope'.*simple-prompt"):
                await expand_input(m, "/everything:nope")
            with pytest.raises(McpInputError, match="answered resources/read of demo://no"):
                await expand_input(m, "see @everything:demo://no/such/thing")

    asyncio.run(main())


def test_a_mention_of_a_server_that_is_not_running_says_so(tmp_path: Path) -> None:
    person = Person(tmp_path, replies={"mcp-start:everything": "reject"})

    async def main() -> None:
        async with McpManager(tmp_path, {"everything": everything_stdio(new_mark())},
                              permission=person.permission, log_dir=tmp_path / "logs") as m:
            assert mentions_mcp(f"@everything:{DOC}", m.config.servers)
            assert not mentions_mcp(f"@other:{DOC}", m.config.servers)
            with pytest.raises(McpInputError, match="'everything' is not running \\(refused"):
                await expand_input(m, f"@everything:{DOC}")

    asyncio.run(main())


def test_a_changed_resource_list_is_listed_again(tmp_path: Path) -> None:
    person = Person(tmp_path, mode="yes")

    async def main() -> None:
        async with McpManager(tmp_path, {"py": python_server(new_mark())},
                              permission=person.permission, log_dir=tmp_path / "logs") as m:
            assert "@py:note://groceries" not in completions(m)
            tools = {t.name: t for t in m.tools}
            await person.call(tools["py__add_note"], name="groceries", text="milk, bread")
            await m.refresh()  # between steps: the changed lists are fetched again
            assert "@py:note://groceries" in completions(m)
            found = await expand_input(m, "buy @py:note://groceries")
            assert found is not None and "milk, bread" in found.model_text

    asyncio.run(main())
