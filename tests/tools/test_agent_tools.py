"""agent_list/create/edit/delete on the real saved-agent store: each write shows the whole
definition in its question, and an agent created in a session is one `task` starts at once."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tool_calls import Call, MakeContext, answering
from totem.abort import AbortSignal
from totem.agents.definitions import project_key
from totem.agents.load import load_agents
from totem.agents.saved import get_saved_agent
from totem.events import ToolEnd
from totem.policy.permission import PermissionDenied
from totem.providers.base import ModelRequest
from totem.session.service import SessionService
from totem.settings.config import Config
from totem.settings.integrations import Integrations
from totem.store.sqlite import SqliteStore
from totem.testing.scripted import FunctionProvider, Turn, reply
from totem.testing.scripted import call as model_call
from totem.tools.agent_tools import AgentCreate, AgentDelete, AgentEdit, AgentList
from totem.tools.base import ToolError


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    return SqliteStore(tmp_path / "totem.db")


def test_create_shows_the_definition_and_saves_it(store: SqliteStore, project: Path,
                                                  make_ctx: MakeContext, call: Call) -> None:
    ctx = make_ctx(mode="interactive")
    asked = answering(ctx, "once")
    result = call(AgentCreate(lambda: store), ctx, name="reviewer",
                  description="Reviews a change", prompt="You review diffs.",
                  tools=["read", "grep"], maxsteps=12)
    assert asked[0].permission == "agents" and asked[0].patterns == ["reviewer"]
    assert asked[0].title.startswith("save the agent 'reviewer' for this project:\n")
    for line in ("name: reviewer", "description: Reviews a change", "tools: [read, grep]",
                 "maxsteps: 12", "You review diffs."):
        assert f"    {line}" in asked[0].title.splitlines()
    assert "The task tool can start it now (agent: reviewer)" in result.output
    saved = get_saved_agent(store.db, "reviewer", project=project_key(project))
    assert saved is not None and saved.tools == ("read", "grep") and saved.max_steps == 12
    assert load_agents(project, store)["reviewer"].source == "project"
    listing = call(AgentList(lambda: store), ctx).output
    assert "reviewer (project; read, grep): Reviews a change" in listing.splitlines()
    assert "explore (builtin;" in listing


def test_a_rejected_write_changes_nothing(store: SqliteStore, project: Path,
                                          make_ctx: MakeContext, call: Call) -> None:
    ctx = make_ctx(mode="interactive")
    answering(ctx, "reject")
    with pytest.raises(PermissionDenied):
        call(AgentCreate(lambda: store), ctx, name="x", description="d", prompt="p",
             scope="global")
    assert get_saved_agent(store.db, "x", project=None) is None
    with pytest.raises(PermissionDenied):
        call(AgentCreate(lambda: store), make_ctx(mode="headless"), name="x", description="d",
             prompt="p")
    assert "x" not in load_agents(project, store)


def test_edit_and_delete(store: SqliteStore, project: Path, make_ctx: MakeContext,
                         call: Call) -> None:
    ctx = make_ctx()
    call(AgentCreate(lambda: store), ctx, name="helper", description="old", prompt="Old.",
         scope="global")
    person = make_ctx(mode="interactive")
    asked = answering(person, "once")
    edited = call(AgentEdit(lambda: store), person, name="helper", description="new",
                  tools=["read"], scope="global")
    assert edited.output == "Changed the agent 'helper' saved for all projects: description, tools."
    assert "(description, tools) to:\n" in asked[0].title
    assert "    description: new" in asked[0].title and "    Old." in asked[0].title
    assert load_agents(project, store)["helper"].description == "new"
    with pytest.raises(ToolError, match="no agent named 'helper' saved for this project "
                                        r"\(try scope: global\)"):
        call(AgentDelete(lambda: store), ctx, name="helper")
    with pytest.raises(ToolError, match="'explore' is a built-in agent"):
        call(AgentEdit(lambda: store), ctx, name="explore", description="mine")
    with pytest.raises(ToolError, match="Nothing to change"):
        call(AgentEdit(lambda: store), ctx, name="helper", scope="global")
    deleted = call(AgentDelete(lambda: store), person, name="helper", scope="global")
    assert deleted.output == "Deleted the agent 'helper' saved for all projects."
    assert asked[-1].title.startswith("delete the agent 'helper' saved for all projects:\n")
    assert "helper" not in load_agents(project, store)


def test_bad_definitions_are_refused(store: SqliteStore, make_ctx: MakeContext,
                                     call: Call) -> None:
    ctx = make_ctx()
    with pytest.raises(ToolError, match="the name 'no spaces' is not valid"):
        call(AgentCreate(lambda: store), ctx, name="no spaces", description="d", prompt="p")
    with pytest.raises(ToolError, match="The description is empty"):
        call(AgentCreate(lambda: store), ctx, name="a", description=" ", prompt="p")
    call(AgentCreate(lambda: store), ctx, name="a", description="d", prompt="p")
    with pytest.raises(ToolError, match="already saved for this project; change it with"):
        call(AgentCreate(lambda: store), ctx, name="a", description="d", prompt="p")


def test_the_cli_sees_what_the_tool_saved(tmp_path: Path, project: Path, make_ctx: MakeContext,
                                          call: Call) -> None:
    data = tmp_path / "data"
    store = SqliteStore(data / "totem" / "totem.db")
    call(AgentCreate(lambda: store), make_ctx(), name="docs-writer", description="Writes docs",
         prompt="You write docs.")
    store.close()
    env = {"XDG_DATA_HOME": str(data), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    shown = subprocess.run([sys.executable, "-m", "totem", "agents", "list"], cwd=project,
                           env=env, capture_output=True, text=True, timeout=60)
    assert "docs-writer  saved, project" in shown.stdout, shown.stderr


def test_an_agent_created_in_a_session_is_started_by_task(tmp_path: Path, project: Path) -> None:
    def model(request: ModelRequest, _index: int) -> Turn:
        system = request.system or ""
        if "You are the LINTER." in system:
            return reply("LINTER: 3 problems")
        results = [p for m in request.messages for p in m.parts if hasattr(p, "output")]
        if not results:
            return model_call(("agent_create", {"name": "linter", "description": "Lints code",
                                                "prompt": "You are the LINTER."}))
        if len(results) == 1:
            return model_call(("task", {"agent": "linter", "prompt": "lint app.py"}))
        return reply("done")

    store = SqliteStore(tmp_path / "store.db")
    config = Config(model="m", integrations=Integrations(agents=True))

    async def go() -> list[object]:
        service = SessionService(project, mode="yes", config=config, store=store,
                                 provider=FunctionProvider(model))
        try:
            session = service.open()
            return [e async for e in service.run(session, "make a linter and use it",
                                                 abort=AbortSignal())]
        finally:
            await service.aclose()

    events = asyncio.run(go())
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert [e.name for e in ends] == ["agent_create", "task"], ends
    assert not ends[1].is_error and "LINTER: 3 problems" in ends[1].output
