"""The budget for MCP tool definitions: `tools.mcp_schema_budget` in the config, the default
that keeps an 8k model's request small, and the listing past it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.support.mcp_servers import Person, everything_stdio, new_mark
from totem.mcp.manager import DEFAULT_SCHEMA_BUDGET, McpManager
from totem.mcp.offer import SCHEMA_TOOL
from totem.settings.config import load_config
from totem.tools.base import is_offered


def offered(tmp: Path, **budget: int | None) -> list[str]:
    person = Person(tmp, mode="yes")

    async def main() -> list[str]:
        async with McpManager(tmp, {"everything": everything_stdio(new_mark())},
                              permission=person.permission, log_dir=tmp / "logs",
                              **budget) as manager:  # type: ignore[arg-type]
            return [s.name for s in manager.specs()]

    return asyncio.run(main())


def test_the_budget_decides_between_schemas_and_a_listing(tmp_path: Path) -> None:
    full = offered(tmp_path, schema_budget=10**6)
    assert SCHEMA_TOOL not in full and "everything__echo" in full
    assert offered(tmp_path, schema_budget=100) == [SCHEMA_TOOL]
    assert offered(tmp_path, context_window=8192) == [SCHEMA_TOOL]  # a tenth of 8k: 819
    assert DEFAULT_SCHEMA_BUDGET <= 2000


def test_the_budget_is_read_from_the_config(tmp_path: Path) -> None:
    (tmp_path / ".totem").mkdir()
    (tmp_path / ".totem" / "config.yaml").write_text("tools:\n  mcp_schema_budget: 500\n")
    assert load_config(tmp_path, trusted=True).tools.mcp_schema_budget == 500
    assert load_config(tmp_path / "elsewhere", trusted=True).tools.mcp_schema_budget is None


def test_a_listed_tool_can_still_be_called(tmp_path: Path) -> None:
    """A run that does not refresh its tools (a knowledge pack's server) still reaches a
    listed tool by the name it read in mcp_tool_schema."""
    person = Person(tmp_path, mode="yes")

    async def main() -> None:
        async with McpManager(tmp_path, {"everything": everything_stdio(new_mark())},
                              permission=person.permission, log_dir=tmp_path / "logs",
                              schema_budget=100) as manager:
            tools = {t.name: t for t in manager.tools}
            assert not is_offered(tools["everything__echo"])
            result = await person.call(tools["everything__echo"], message="still here")
            assert result.output == "Echo: still here"

    asyncio.run(main())
