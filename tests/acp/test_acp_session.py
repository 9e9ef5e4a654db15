"""`totem acp` as an editor runs it: the ACP SDK's client side starts `totem acp` as a
separate process, and drives whole sessions against the package's fake model server."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    FileEditToolCallContent,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from tests.support.acp_editor import Editor, connected, text_of
from tests.support.acp_transcript import write_transcript
from tests.support.headless import Project
from tests.support.sandbox import require_bwrap


def _text(text: str) -> list[TextContentBlock]:
    return [TextContentBlock(type="text", text=text)]


def _tool_updates(updates: list[Any], name: str) -> list[Any]:
    ids = {u.tool_call_id for u in updates if isinstance(u, ToolCallStart)
           and u.title.startswith(name)}
    return [u for u in updates if isinstance(u, ToolCallStart | ToolCallProgress)
            and u.tool_call_id in ids]


def _final(updates: list[Any], name: str) -> ToolCallProgress:
    ends = [u for u in _tool_updates(updates, name)
            if isinstance(u, ToolCallProgress) and u.status in ("completed", "failed")]
    assert ends, f"no end of a {name} call"
    return ends[-1]


def _content_text(update: ToolCallProgress) -> str:
    return "".join(c.content.text for c in update.content or []
                   if getattr(c, "type", "") == "content"
                   and isinstance(c.content, TextContentBlock))


TURNS: list[dict[str, Any]] = [
    {"tool": "read", "args": {"path": "hello.txt"}},
    {"reasoning": "The file greets the world.", "text": "It says hello world."},
    {"tool": "edit", "args": {"path": "hello.txt", "old_string": "world",
                              "new_string": "there"}},
    {"text": "Changed it."},
    {"tool": "bash", "args": {"command": "rm -rf data"}},
    {"text": "I left data alone."},
    {"text": "Once upon a time", "stall": True},
    {"text": "We spoke about hello.txt."},
]


def test_a_whole_session_in_an_editor(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.config_extra = "sandbox: off\n"  # its subject is the editor's permission buttons
    (project.root / "hello.txt").write_text("hello world\n")
    (project.root / "data").mkdir()
    (project.root / "data" / "keep.txt").write_text("keep me\n")
    # an untrusted folder's config stays inert: this would allow `rm` without asking
    (project.root / ".totem").mkdir()
    (project.root / ".totem" / "config.yaml").write_text(
        "permission:\n  - {permission: bash, pattern: 'rm *', action: allow}\n")
    log = tmp_path / "acp.log"
    editor = Editor(answers=["allow_once", "reject_always"])
    with project.serve(TURNS):
        async def first() -> str:
            async with connected(editor, cwd=project.root, env=project.env, log=log) as conn:
                made = await conn.new_session(cwd=str(project.root), mcp_servers=[])
                sid = made.session_id
                assert made.modes is not None and made.modes.current_mode_id == "default"
                models = [o for o in made.config_options or [] if o.id == "model"]
                assert models and models[0].current_value == "fake/m"

                asked = await conn.prompt(session_id=sid, prompt=_text("What does hello.txt say?"))
                assert asked.stop_reason == "end_turn"
                updates = editor.updates[sid]
                assert "It says hello world." in text_of(updates, AgentMessageChunk)
                assert "greets the world" in text_of(updates, AgentThoughtChunk)
                assert "not trusted" in text_of(updates, AgentMessageChunk)
                read = _final(updates, "read")
                assert read.status == "completed" and "hello world" in _content_text(read)

                edited = await conn.prompt(session_id=sid,
                                           prompt=_text("Say there instead of world."))
                assert edited.stop_reason == "end_turn"
                call, options = editor.permissions[0]
                assert [o.kind for o in options] == [
                    "allow_once", "allow_always", "reject_once", "reject_always"]
                diff = [c for c in call.content or [] if isinstance(c, FileEditToolCallContent)]
                assert diff and diff[0].path == str(project.root / "hello.txt")
                assert diff[0].old_text == "hello world\n"
                assert diff[0].new_text == "hello there\n"
                assert (project.root / "hello.txt").read_text() == "hello there\n"
                end = _final(editor.updates[sid], "edit")
                assert end.status == "completed"
                assert any(isinstance(c, FileEditToolCallContent) for c in end.content or [])

                denied = await conn.prompt(session_id=sid, prompt=_text("Delete data."))
                assert denied.stop_reason == "end_turn"
                assert (project.root / "data" / "keep.txt").exists()
                assert "rm -rf data" in (editor.permissions[1][0].title or "")
                refused = _final(editor.updates[sid], "bash")
                assert refused.status == "failed" and "rejected" in _content_text(refused)

                editor.first_chunk.clear()
                story = asyncio.create_task(
                    conn.prompt(session_id=sid, prompt=_text("Tell me a long story.")))
                await asyncio.wait_for(editor.first_chunk.wait(), 30)
                await conn.cancel(session_id=sid)
                cancelled = await asyncio.wait_for(story, 30)
                assert cancelled.stop_reason == "cancelled"
                # the server never said what the cut answer cost: its tokens are estimated
                assert cancelled.usage is not None and cancelled.usage.input_tokens > 0
                assert cancelled.usage.output_tokens > 0
                return sid

        sid = asyncio.run(first())
        rules = project.store().remembered_rules(os.path.realpath(project.root))
        assert [(r.permission, r.pattern, r.action) for r in rules] == [
            ("bash", "rm -rf data", "deny")]

        # a second editor process loads the session: the conversation comes back, and goes on
        later = Editor()

        async def second() -> None:
            async with connected(later, cwd=project.root, env=project.env, log=log) as conn:
                listed = await conn.list_sessions(cwd=str(project.root))
                assert sid in [s.session_id for s in listed.sessions]
                await conn.load_session(cwd=str(project.root), session_id=sid, mcp_servers=[])
                replayed = later.updates[sid]
                assert "What does hello.txt say?" in text_of(replayed, UserMessageChunk)
                assert "It says hello world." in text_of(replayed, AgentMessageChunk)
                assert "Once upon a time" in text_of(replayed, AgentMessageChunk)
                assert any(isinstance(u, ToolCallStart) and u.status == "completed"
                           and u.title.startswith("edit") for u in replayed)
                again = await conn.prompt(session_id=sid, prompt=_text("What did we do?"))
                assert again.stop_reason == "end_turn"
                assert "We spoke about hello.txt." in text_of(later.updates[sid],
                                                              AgentMessageChunk)

        asyncio.run(second())
        last = json.dumps(project.chats()[-1]["messages"])
        assert "It says hello world." in last and "What did we do?" in last
    write_transcript([editor.transcript, later.transcript], tmp_path / "transcript.md",
                     root=project.root)


def test_the_edit_goes_through_the_editors_unsaved_buffer(tmp_path: Path) -> None:
    project = Project(tmp_path)
    hello = project.root / "hello.txt"
    hello.write_text("hello world\n")
    editor = Editor(answers=["allow_once"], fs=True)
    editor.buffers[str(hello)] = "hello unsaved world\n"  # typed in the editor, not saved
    turns = [
        {"tool": "read", "args": {"path": "hello.txt"}},
        {"tool": "edit", "args": {"path": "hello.txt", "old_string": "unsaved world",
                                  "new_string": "saved planet"}},
        {"text": "Done."},
    ]
    with project.serve(turns):
        async def session() -> None:
            async with connected(editor, cwd=project.root, env=project.env,
                                 log=tmp_path / "acp.log") as conn:
                sid = (await conn.new_session(cwd=str(project.root), mcp_servers=[])).session_id
                done = await conn.prompt(session_id=sid, prompt=_text("Fix hello.txt"))
                assert done.stop_reason == "end_turn"
                assert "unsaved" in _content_text(_final(editor.updates[sid], "read"))

        asyncio.run(session())
    assert str(hello) in editor.reads
    assert editor.writes == [(str(hello), "hello saved planet\n")]
    assert hello.read_text() == "hello saved planet\n"
    tool_results = [m for m in project.chats()[1]["messages"] if m["role"] == "tool"]
    assert "hello unsaved world" in tool_results[0]["content"]


def _one_prompt(project: Project, editor: Editor, turns: list[dict[str, Any]], text: str, *,
                log: Path) -> str:
    """A new session in `editor` with one prompt, answered by `turns`: its session id."""
    with project.serve(turns):
        async def session() -> str:
            async with connected(editor, cwd=project.root, env=project.env, log=log) as conn:
                sid = (await conn.new_session(cwd=str(project.root), mcp_servers=[])).session_id
                done = await conn.prompt(session_id=sid, prompt=_text(text))
                assert done.stop_reason == "end_turn"
                return sid

        return asyncio.run(session())


def test_bash_runs_in_the_editors_terminal_and_always_stores_a_rule(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.config_extra = "sandbox: off\n"  # a line outside the sandbox: the editor runs it
    (project.root / "a.txt").write_text("a\n")
    editor = Editor(answers=["allow_always"], terminal=True)
    turns = [{"tool": "bash", "args": {"command": "ls"}},
             {"tool": "bash", "args": {"command": "ls -a"}}, {"text": "Listed."}]
    sid = _one_prompt(project, editor, turns, "List the files", log=tmp_path / "acp.log")
    assert len(editor.permissions) == 1  # the second `ls` is allowed by the stored rule
    assert [c[-1] for c in editor.commands] == ["ls", "ls -a"]
    updates = editor.updates[sid]
    assert any(isinstance(c, TerminalToolCallContent)
               for u in updates if isinstance(u, ToolCallProgress) for c in u.content or [])
    assert "a.txt" in _content_text(_final(updates, "bash"))
    rules = project.store().remembered_rules(os.path.realpath(project.root))
    assert ("bash", "ls *", "allow") in [(r.permission, r.pattern, r.action) for r in rules]


def test_with_the_sandbox_on_a_command_runs_here_wrapped_not_in_the_editors_terminal(
    tmp_path: Path,
) -> None:
    # an editor's terminal cannot be put in totem's sandbox, so a sandboxed line never goes
    # there: it runs here under bwrap, with no question, and its write outside fails
    require_bwrap()
    project = Project(tmp_path)
    outside = tmp_path / "outside.txt"
    editor = Editor(answers=[], terminal=True)
    turns = [{"tool": "bash", "args": {"command": f"ls; echo x > {outside}"}},
             {"text": "Done."}]
    sid = _one_prompt(project, editor, turns, "List the files", log=tmp_path / "acp.log")
    assert editor.permissions == [] and editor.commands == []
    assert not outside.exists()
    assert _final(editor.updates[sid], "bash").status in ("completed", "failed")


def _path_without(tmp_path: Path, program: str) -> str:
    """A PATH of every program this one has, but `program` (links in one folder)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for place in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(place):
            continue
        for name in os.listdir(place):
            link = folder / name
            if name != program and not link.exists() and not link.is_symlink():
                link.symlink_to(os.path.join(place, name))
    return str(folder)


def test_with_no_sandbox_here_a_line_in_the_editors_terminal_says_so_in_the_log_only(
    tmp_path: Path,
) -> None:
    # the sandbox is on (the default) but bwrap is missing: the line goes to the editor's
    # terminal, as asked; the missing sandbox is not message text in the conversation
    project = Project(tmp_path)
    project.env["PATH"] = _path_without(tmp_path, "bwrap")
    editor = Editor(answers=["allow_once"], terminal=True)
    turns = [{"tool": "bash", "args": {"command": "ls"}}, {"text": "Listed."}]
    log = tmp_path / "acp.log"
    sid = _one_prompt(project, editor, turns, "List the files", log=log)
    assert [c[-1] for c in editor.commands] == ["ls"]
    said = text_of(editor.updates[sid], AgentMessageChunk)
    assert "Listed." in said and "sandbox" not in said
    assert "Commands run without a sandbox: bubblewrap (bwrap) is not installed" in (
        log.read_text())
