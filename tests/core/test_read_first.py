"""Read before changing: write, edit and patch refuse an existing file the session has not read."""

from __future__ import annotations

from pathlib import Path

from tests.support.loop_agents import make_agent, run_once
from totem.messages import Message, ToolPart
from totem.store.sqlite import SqliteStore
from totem.testing.scripted import ScriptedProvider, call, reply
from totem.tools.edit import Edit
from totem.tools.patch import Patch
from totem.tools.read import Read
from totem.tools.write import Write

TOOLS = [Read(), Write(), Edit(), Patch()]


def outputs(agent_store: object, sid: str) -> list[tuple[str, str, str]]:
    from totem.store.sqlite import SqliteStore

    assert isinstance(agent_store, SqliteStore)
    return [(p.name, p.state, p.output) for m in agent_store.messages(sid) for p in m.parts
            if isinstance(p, ToolPart)]


def project_with_requirements(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "requirements.txt").write_text("flask==3.0\nrequests==2.31\n")
    return root


def test_write_over_an_unread_file_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    root = project_with_requirements(tmp_path)
    turns = [call(("write", {"path": "requirements.txt", "content": "numpy\n"})), reply("done")]
    agent = make_agent(tmp_path, ScriptedProvider(turns), tools=TOOLS)
    sid, _ = run_once(agent, "add numpy")
    [(name, state, output)] = outputs(agent.store, sid)
    assert (name, state) == ("write", "error")
    assert "has not been read" in output and "read with path requirements.txt" in output
    assert (root / "requirements.txt").read_text() == "flask==3.0\nrequests==2.31\n"


def test_after_a_read_the_edit_goes_through(tmp_path: Path) -> None:
    root = project_with_requirements(tmp_path)
    turns = [
        call(("read", {"path": "requirements.txt"})),
        call(("edit", {"path": "./requirements.txt", "old_string": "flask==3.0",
                       "new_string": "flask==3.1"})),
        reply("done"),
    ]
    agent = make_agent(tmp_path, ScriptedProvider(turns), tools=TOOLS)
    sid, _ = run_once(agent, "bump flask")
    assert [s for _, s, _ in outputs(agent.store, sid)] == ["completed", "completed"]
    assert (root / "requirements.txt").read_text().startswith("flask==3.1\n")


def test_new_files_need_no_read_and_what_the_session_wrote_counts_as_read(
    tmp_path: Path,
) -> None:
    root = project_with_requirements(tmp_path)
    turns = [
        call(("write", {"path": "notes/todo.txt", "content": "one\n"})),
        call(("edit", {"path": "notes/todo.txt", "old_string": "one", "new_string": "two"})),
        reply("done"),
    ]
    agent = make_agent(tmp_path, ScriptedProvider(turns), tools=TOOLS)
    sid, _ = run_once(agent, "notes")
    assert [s for _, s, _ in outputs(agent.store, sid)] == ["completed", "completed"]
    assert (root / "notes/todo.txt").read_text() == "two\n"


def test_patch_add_file_over_an_existing_unread_file_is_refused(tmp_path: Path) -> None:
    root = project_with_requirements(tmp_path)
    patch = "*** Begin Patch\n*** Add File: requirements.txt\n+numpy\n*** End Patch"
    turns = [call(("patch", {"patch": patch})), reply("done")]
    agent = make_agent(tmp_path, ScriptedProvider(turns), tools=TOOLS)
    sid, _ = run_once(agent, "replace")
    [(_, state, output)] = outputs(agent.store, sid)
    assert state == "error" and "requirements.txt already exists" in output
    assert "flask" in (root / "requirements.txt").read_text()


def test_a_read_in_an_earlier_run_of_the_session_counts(tmp_path: Path) -> None:
    root = project_with_requirements(tmp_path)
    first = make_agent(tmp_path, ScriptedProvider(
        [call(("read", {"path": "requirements.txt"})), reply("It lists flask.")]), tools=TOOLS)
    sid, _ = run_once(first, "what is in requirements.txt")
    second = make_agent(tmp_path, ScriptedProvider(
        [call(("write", {"path": "requirements.txt", "content": "flask==3.0\n"})),
         reply("done")]), tools=TOOLS, store=first.store)
    run_once(second, "drop requests", session_id=sid)
    assert (root / "requirements.txt").read_text() == "flask==3.0\n"


def test_an_edit_of_a_file_that_does_not_exist_points_to_write(tmp_path: Path) -> None:
    project_with_requirements(tmp_path)
    turns = [call(("edit", {"path": "hello.txt", "old_string": "hello world",
                            "new_string": "hello, world"})), reply("done")]
    agent = make_agent(tmp_path, ScriptedProvider(turns), tools=TOOLS)
    sid, _ = run_once(agent, "create hello.txt")
    [(_, state, output)] = outputs(agent.store, sid)
    assert state == "error"
    assert output == "hello.txt does not exist. To create a new file, use write."


class CountingStore(SqliteStore):
    """The real store, counting how often a session's whole history is loaded."""

    loads = 0

    def messages(self, session_id: str) -> list[Message]:
        self.loads += 1
        return super().messages(session_id)


def test_a_run_loads_the_history_once_and_still_knows_the_earlier_reads(tmp_path: Path) -> None:
    root = project_with_requirements(tmp_path)
    store = CountingStore(tmp_path / "store.db")
    first = [call(("read", {"path": "requirements.txt"})), reply("read it")]
    agent = make_agent(tmp_path, ScriptedProvider(first), tools=TOOLS, store=store)
    sid, _ = run_once(agent, "look")
    turns = [call(("edit", {"path": "requirements.txt", "old_string": "flask==3.0",
                            "new_string": "flask==3.1"})), reply("done")]
    agent = make_agent(tmp_path, ScriptedProvider(turns), tools=TOOLS, store=store)
    store.loads = 0
    run_once(agent, "bump flask", session_id=sid)
    assert store.loads == 1  # the run's own copy also says what was read
    assert [s for _, s, _ in outputs(store, sid)] == ["completed", "completed"]
    assert (root / "requirements.txt").read_text().startswith("flask==3.1\n")
