"""What an editor sends with a prompt and chooses for a session, through a real `totem acp`
process: a file link, an embedded buffer, an image, the model picker, the modes, a question
of the ask tool answered with the editor's buttons, and a resumed session."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import (
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from tests.support.acp_editor import Editor, connected
from tests.support.headless import Project

# a 1x1 PNG
PIXEL = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db40000000049454e44ae426082"
)).decode()


def _configure(project: Project, url: str) -> None:
    (project.tmp / "totem.yaml").write_text(
        "model: fake/m\n"
        f"providers:\n  fake: {{kind: openai, base_url: '{url}',\n"
        "         models: {m: {}, gpt-4o: {}}}\n"
        "knowledge: {totaljs: never, forge: false}\n")


def _user_text(body: dict[str, Any]) -> str:
    return json.dumps([m for m in body["messages"] if m["role"] == "user"])


def test_links_buffers_images_and_the_model_picker(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (project.root / "notes.txt").write_text("the notes say 42\n")
    editor = Editor()
    turns = [{"text": "Seen."}, {"text": "Still seen."}]
    with project.serve(turns) as server:
        _configure(project, server.url)

        async def session() -> str:
            async with connected(editor, cwd=project.root, env=project.env,
                                 log=tmp_path / "acp.log") as conn:
                made = await conn.new_session(cwd=str(project.root), mcp_servers=[])
                sid = made.session_id
                picker = next(o for o in made.config_options or [] if o.id == "model")
                assert [o.value for o in picker.options] == ["fake/m", "fake/gpt-4o"]
                chosen = await conn.set_config_option(config_id="model", session_id=sid,
                                                      value="fake/gpt-4o")
                now = next(o for o in chosen.config_options if o.id == "model")
                assert now.current_value == "fake/gpt-4o"
                with pytest.raises(RequestError):
                    await conn.set_config_option(config_id="model", session_id=sid,
                                                 value="elsewhere/x")
                with pytest.raises(RequestError):
                    await conn.set_session_mode(session_id=sid, mode_id="yolo")
                await conn.set_session_mode(session_id=sid, mode_id="default")
                prompt: list[Any] = [
                    TextContentBlock(type="text", text="Compare"),
                    ResourceContentBlock(type="resource_link", name="notes.txt",
                                         uri=(project.root / "notes.txt").as_uri()),
                    TextContentBlock(type="text", text="with my buffer"),
                    EmbeddedResourceContentBlock(type="resource", resource=TextResourceContents(
                        uri=(project.root / "buf.py").as_uri(), text="x = 1  # unsaved\n")),
                    ImageContentBlock(type="image", data=PIXEL, mime_type="image/png"),
                ]
                done = await conn.prompt(session_id=sid, prompt=prompt)
                assert done.stop_reason == "end_turn"
                return sid

        sid = asyncio.run(session())
        body = project.chats()[0]
        assert body["model"] == "gpt-4o"
        sent = _user_text(body)
        assert "@notes.txt" in sent and "the notes say 42" in sent
        assert "Attached from the editor: buf.py" in sent and "x = 1  # unsaved" in sent
        assert f"data:image/png;base64,{PIXEL}" in sent

        later = Editor()

        async def resumed() -> None:
            async with connected(later, cwd=project.root, env=project.env,
                                 log=tmp_path / "acp.log") as conn:
                await conn.resume_session(cwd=str(project.root), session_id=sid, mcp_servers=[])
                assert sid not in later.updates  # resume does not replay
                done = await conn.prompt(session_id=sid,
                                         prompt=[TextContentBlock(type="text", text="Again")])
                assert done.stop_reason == "end_turn"
                with pytest.raises(RequestError):
                    await conn.resume_session(cwd=str(project.root), session_id="ses_nothing",
                                              mcp_servers=[])

        asyncio.run(resumed())
        assert "Seen." in json.dumps(project.chats()[-1]["messages"])


def test_the_ask_tool_is_answered_with_the_editors_buttons(tmp_path: Path) -> None:
    project = Project(tmp_path)
    editor = Editor(answers=["1"])
    turns = [{"tool": "ask", "args": {"question": "Which language?",
                                      "options": ["Python", "Rust"]}},
             {"text": "Rust it is."}]
    with project.serve(turns):
        async def session() -> None:
            async with connected(editor, cwd=project.root, env=project.env,
                                 log=tmp_path / "acp.log") as conn:
                sid = (await conn.new_session(cwd=str(project.root), mcp_servers=[])).session_id
                done = await conn.prompt(session_id=sid, prompt=[
                    TextContentBlock(type="text", text="Start a project")])
                assert done.stop_reason == "end_turn"

        asyncio.run(session())
    call, options = editor.permissions[0]
    assert call.title == "Which language?"
    assert [o.name for o in options] == ["Python", "Rust", "No answer"]
    tool_results = [m for m in project.chats()[1]["messages"] if m["role"] == "tool"]
    assert "Rust" in tool_results[0]["content"]
