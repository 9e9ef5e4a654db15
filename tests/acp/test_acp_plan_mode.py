"""Plan mode from an editor, through a real `totem acp` process: the three modes offered, a
plan-mode answer's plan shown and offered for approval with the editor's buttons; approved
with "make the edits without asking", it is carried out in the same prompt with no question
about the edit; "keep planning" leaves the session in plan mode."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentPlanUpdate,
    CurrentModeUpdate,
    TextContentBlock,
    ToolCallStart,
)

from tests.support.acp_editor import Editor, connected
from tests.support.headless import Project
from totem.policy.modes import PLAN_TOOLS

PLAN = "I will add a greeting.\n\n1. Create new.py printing hi\n2. Run it to check"
WRITE = {"tool": "write", "args": {"path": "new.py", "content": "print('hi')\n"}}


def _text(text: str) -> list[TextContentBlock]:
    return [TextContentBlock(type="text", text=text)]


def _offered(chat: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in chat.get("tools") or []}


def _last_user(chat: dict[str, Any]) -> str:
    return str([m for m in chat["messages"] if m["role"] == "user"][-1]["content"])


def test_a_plan_approved_in_the_editor_is_carried_out_without_asking(tmp_path: Path) -> None:
    project = Project(tmp_path)
    editor = Editor(answers=["accept_edits"])
    with project.serve([{"text": PLAN}, WRITE, {"text": "Done."}]):
        async def session() -> str:
            async with connected(editor, cwd=project.root, env=project.env,
                                 log=tmp_path / "acp.log") as conn:
                made = await conn.new_session(cwd=str(project.root), mcp_servers=[])
                assert made.modes is not None
                assert [m.id for m in made.modes.available_modes] == [
                    "default", "plan", "accept_edits"]
                await conn.set_session_mode(session_id=made.session_id, mode_id="plan")
                done = await conn.prompt(session_id=made.session_id,
                                         prompt=_text("Add a greeting"))
                assert done.stop_reason == "end_turn"
                return made.session_id

        sid = asyncio.run(session())
    first, approved, _ = project.chats()
    assert _offered(first) <= PLAN_TOOLS and "plan mode" in first["messages"][0]["content"]
    assert "The plan is approved" in _last_user(approved) and "write" in _offered(approved)
    assert (project.root / "new.py").read_text() == "print('hi')\n"
    assert len(editor.permissions) == 1  # the plan's; the write was not asked about
    call, options = editor.permissions[0]
    assert call.kind == "switch_mode"
    assert [o.option_id for o in options] == ["default", "accept_edits", "plan"]
    updates = editor.updates[sid]
    shown = [u for u in updates if isinstance(u, ToolCallStart) and u.kind == "switch_mode"]
    assert shown and "1. Create new.py printing hi" in str(shown[0].content)
    plans = [[e.content for e in u.entries] for u in updates if isinstance(u, AgentPlanUpdate)]
    assert plans[0] == ["Create new.py printing hi", "Run it to check"]
    modes = [u.current_mode_id for u in updates if isinstance(u, CurrentModeUpdate)]
    assert modes == ["accept_edits"]


def test_keep_planning_leaves_the_session_in_plan_mode(tmp_path: Path) -> None:
    project = Project(tmp_path)
    editor = Editor(answers=["plan"])
    with project.serve([{"text": PLAN}, {"text": "1. Create hello.py instead"}]):
        async def session() -> str:
            async with connected(editor, cwd=project.root, env=project.env,
                                 log=tmp_path / "acp.log") as conn:
                sid = (await conn.new_session(cwd=str(project.root), mcp_servers=[])).session_id
                chosen = await conn.set_config_option(config_id="mode", session_id=sid,
                                                      value="plan")
                mode = next(o for o in chosen.config_options if o.id == "mode")
                assert mode.current_value == "plan"
                first = await conn.prompt(session_id=sid, prompt=_text("Add a greeting"))
                assert first.stop_reason == "end_turn"
                again = await conn.prompt(session_id=sid, prompt=_text("Call it hello.py"))
                assert again.stop_reason == "end_turn"
                return sid

        sid = asyncio.run(session())
    chats = project.chats()
    assert len(chats) == 2  # nothing was carried out
    assert all(_offered(chat) <= PLAN_TOOLS for chat in chats)
    assert "Call it hello.py" in _last_user(chats[1])
    assert sorted(p.name for p in project.root.iterdir()) == []
    assert not [u for u in editor.updates[sid] if isinstance(u, CurrentModeUpdate)]
    assert len(editor.permissions) == 2  # the second plan too: no answer left, cancelled
