"""Plan mode: a run that only reads, against the package's fake OpenAI server (real HTTP),
in `totem run --plan` processes and in the session service; what the model is offered, what
it is refused, the plan shown, and approving it (the session goes on with it as todo)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.headless import Project, json_lines
from totem.abort import AbortSignal
from totem.events import Event, PlanProposed, RunFinished, TodoUpdated, ToolEnd
from totem.policy.modes import MODES, PLAN_TOOLS, mode_permission, next_mode
from totem.policy.permission import PermissionDenied, PermissionService, Rule
from totem.session.plan import plan_steps
from totem.session.service import SessionService
from totem.settings.config import Config, KnowledgeSettings, ProviderConfig
from totem.store.sqlite import SqliteStore
from totem.testing.fake_server import FakeOpenAIServer

WRITE = {"tool": "write", "args": {"path": "new.py", "content": "print('hi')\n"}}
BASH = {"tool": "bash", "args": {"command": "touch ran.txt"}}
PLAN = "I will add a greeting.\n\n1. Create new.py printing hi\n2. Run it to check"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def offered(chat: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in chat.get("tools") or []}


def tool_results(chat: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in chat["messages"] if m["role"] == "tool"]


def test_run_plan_yes_changes_nothing_and_prints_the_plan(project: Project) -> None:
    (project.root / "app.py").write_text("x = 1\n")
    read = {"tool": "read", "args": {"path": "app.py"}}
    with project.serve([read, WRITE, BASH, {"text": PLAN}]):
        done = project.totem("run", "--plan", "--yes", "add a greeting")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in project.root.iterdir()) == ["app.py"]  # nothing made
    chats = project.chats()
    assert offered(chats[0]) <= PLAN_TOOLS and {"read", "glob", "grep", "todo"} <= offered(
        chats[0])
    assert "plan mode" in chats[0]["messages"][0]["content"]
    results = tool_results(chats[-1])
    assert "x = 1" in results[0]
    assert all(r.startswith("Refused: write is not available in plan mode")
               or r.startswith("Refused: bash is not available in plan mode")
               for r in results[1:]) and len(results) == 3
    assert "Plan (2 steps):\n  1. Create new.py printing hi\n  2. Run it to check" in done.stdout


def test_run_plan_in_json_ends_with_the_plan_event(project: Project) -> None:
    with project.serve([{"text": PLAN}]):
        done = project.totem("run", "--plan", "--format", "json", "add a greeting")
    seen = json_lines(done.stdout)
    plan = next(e for e in seen if e["type"] == "plan")
    assert plan["steps"] == ["Create new.py printing hi", "Run it to check"]
    assert [e["type"] for e in seen][-3:] == ["plan", "run_finished", "result"]


def _config(url: str) -> Config:
    return Config(model="fake/m", providers={"fake": ProviderConfig("fake", "openai", url)},
                  knowledge=KnowledgeSettings(totaljs="never", forge=False))


def test_approving_the_plan_goes_on_in_the_same_session_with_it_as_todo(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    root = tmp_path / "project"
    root.mkdir()
    server = FakeOpenAIServer([WRITE, {"text": PLAN}, WRITE, {"text": "Made new.py."}],
                              models=["m"])
    store = SqliteStore(tmp_path / "store.db")

    async def go() -> tuple[list[Event], list[Event], str]:
        url = await server.start()
        service = SessionService(root, mode="yes", config=_config(url), store=store)
        try:
            session = service.open()
            planned = [e async for e in service.run(session, "add a greeting", mode="plan",
                                                    abort=AbortSignal())]
            assert service.mode(session.id) == "plan"
            plan = next(e for e in planned if isinstance(e, PlanProposed))
            done = [e async for e in service.approve_plan(session, plan.steps,
                                                          abort=AbortSignal())]
            return planned, done, service.mode(session.id)
        finally:
            await service.aclose()
            await server.stop()

    planned, done, mode = asyncio.run(go())
    refused = next(e for e in planned if isinstance(e, ToolEnd))
    assert refused.is_error and "not available in plan mode" in refused.output
    assert mode == "default"
    todo = next(e for e in done if isinstance(e, TodoUpdated))
    assert todo.todos == [{"content": "Create new.py printing hi", "status": "pending"},
                          {"content": "Run it to check", "status": "pending"}]
    assert (root / "new.py").read_text() == "print('hi')\n"
    assert isinstance(done[-1], RunFinished) and done[-1].reason == "finished"
    chats = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    assert "write" in offered(chats[2]) and "plan mode" not in chats[2]["messages"][0]["content"]
    sent = chats[2]["messages"][-1]["content"]
    assert sent.startswith("The plan is approved.") and "2. Run it to check" in sent
    assert [m["content"] for m in chats[2]["messages"] if m["role"] == "user"][0] == \
        "add a greeting"  # the same session: the planning is in its history
    store.close()


def test_the_permission_layer_holds_plan_mode_even_with_yes_and_an_allow_rule() -> None:
    service = PermissionService(rules=[Rule("edit", "*", "allow"), Rule("bash", "*", "allow")],
                                mode="yes", project="/p")
    planning = mode_permission(service, "plan")

    async def ask(permission: PermissionService, name: str) -> None:
        await permission.ask(tool=name, permission=name, patterns=["x"], title=name)

    for name in ("edit", "bash", "agents", "mcp__srv__tool"):
        with pytest.raises(PermissionDenied, match="plan mode"):
            asyncio.run(ask(planning, name))
    asyncio.run(ask(planning, "read"))
    asyncio.run(ask(service, "edit"))  # the service itself is unchanged


def test_accept_edits_allows_file_changes_without_a_question_and_nothing_else() -> None:
    service = PermissionService(rules=[], mode="headless", project="/p")
    editing = mode_permission(service, "accept_edits")

    async def ask(name: str) -> None:
        await editing.ask(tool=name, permission=name, patterns=["a.py"], title=name)

    asyncio.run(ask("edit"))
    with pytest.raises(PermissionDenied, match="nobody can answer"):
        asyncio.run(ask("bash"))


def test_the_modes_and_their_cycle() -> None:
    assert [m.name for m in SessionService.modes()] == ["default", "plan", "accept_edits"]
    assert all(m.title and m.description for m in MODES)
    assert [next_mode("default"), next_mode("plan"), next_mode("accept_edits")] == [
        "plan", "accept_edits", "default"]


def test_plan_steps_from_the_answer() -> None:
    assert plan_steps(PLAN) == ["Create new.py printing hi", "Run it to check"]
    assert plan_steps("- [ ] one\n* two\n3) three") == ["one", "two", "three"]
    assert plan_steps("Just look at it.") == ["Just look at it."]
    assert plan_steps("  ") == []


def test_a_small_models_plan_is_a_constrained_step() -> None:
    from totem.providers.base import StreamEnd, TextChunk, ToolSpec
    from totem.providers.localserver.stepmode import step_events, step_schema

    spec = ToolSpec("read", "Read a file.", {"type": "object",
                                             "properties": {"path": {"type": "string"}}})
    schema = step_schema([spec], plan=True)
    kinds = [next(iter(s["properties"])) for s in schema["anyOf"]]
    assert kinds == ["tool", "plan"]  # no free answer in plan mode
    assert schema["anyOf"][1]["properties"]["plan"]["type"] == "array"

    async def answer() -> list[object]:
        async def stream():  # type: ignore[no-untyped-def]
            yield TextChunk(json.dumps({"plan": ["Read app.py", "Add the route"]}))
            yield StreamEnd("stop")
        return [e async for e in step_events(stream())]

    events = asyncio.run(answer())
    assert events[0] == TextChunk("1. Read app.py\n2. Add the route")


def test_tools_that_come_with_the_run_are_held_to_plan_mode_too() -> None:
    from totem.run.agent import ToolChange
    from totem.session.plan import in_plan_mode
    from totem.tools.base import is_offered
    from totem.tools.registry import builtin_tools

    tools = {t.name: t for t in builtin_tools()}

    async def prepare(_asks: object) -> list[Any]:  # as an MCP server's start gives tools
        return [tools["bash"], tools["grep"]]

    async def refresh() -> ToolChange:
        return ToolChange(frozenset(), [tools["write"]])

    preparers, refreshers = in_plan_mode([prepare], [refresh])

    async def go() -> tuple[list[Any], ToolChange | None]:
        return await preparers[0](lambda _e: None), await refreshers[0]()

    prepared, change = asyncio.run(go())
    assert [(t.name, is_offered(t)) for t in prepared] == [("bash", False), ("grep", True)]
    assert change is not None and not is_offered(change.added[0])
