"""Undo and redo of a request's file changes: the file tools' and the commands'.

After each run the files its calls changed (the session's and its sub-agents') are kept as
checkpoints: the state before the request and after it. A file tool's snapshot gives bytes;
a command's change comes from the snapshots of the work tree around it (totem.snapshots) and
is a blob of that store, mode and symbolic links included; None is no file. Undo
puts back the before side of the latest request still done; redo the after side of the
request undone last (a request made since ends what can be redone). Either refuses, naming
the files, when a file is no longer
what the request left (someone edited it since). The session gets a note in its history,
so the model knows the change was reverted.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from totem.events import Event, RunStarted
from totem.messages import Message, TextPart, ToolPart, new_id
from totem.session.undo_files import is_now, needs_store, put_all, relative, same_state
from totem.snapshots.git import SnapshotError
from totem.store.base import Checkpoint, FileState, Store

if TYPE_CHECKING:
    from totem.snapshots.calls import CallChange, CallSnapshots
    from totem.snapshots.worktree import WorkTreeStore

__all__ = ["UndoResult", "changed_files", "redo", "track_changes", "undo"]

SHOWN_LINES = 40  # of a summary: a command that removed a thousand files is said in short
Direction = Literal["undo", "redo"]


@dataclass(slots=True)
class UndoResult:
    """What an undo or redo did, or why it did nothing."""

    ok: bool
    summary: str
    files: list[str] = field(default_factory=list)  # project-relative, as changed
    conflicts: list[str] = field(default_factory=list)  # changed since the request


def _current(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


async def track_changes(
    events: AsyncIterator[Event], *, store: Store, session_id: str,
    snapshots: CallSnapshots | None = None,
) -> AsyncIterator[Event]:
    """The run's events; when it ends, the files it changed become one checkpoint each."""
    mark, since = store.snapshot_mark(), time.time()
    calls_mark = snapshots.mark() if snapshots is not None else 0
    message_id = ""
    try:
        async for event in events:
            if isinstance(event, RunStarted) and not message_id:
                message_id = event.message_id
            yield event
    finally:
        if message_id:
            _record(store, session_id=session_id, message_id=message_id, mark=mark,
                    since=since, snapshots=snapshots, calls_mark=calls_mark)


def _record(
    store: Store, *, session_id: str, message_id: str, mark: int, since: float,
    snapshots: CallSnapshots | None, calls_mark: int,
) -> None:
    before: dict[str, FileState] = {}
    after: dict[str, FileState] = {}
    for path, content in store.snapshots_after(session_id, mark, since=since):
        if path not in before:
            before[path], after[path] = content, _current(path)
    calls = _calls(store, snapshots, session_id, calls_mark)
    if snapshots is not None:
        snapshots.forget(calls)
    # the calls' own record, in order, wins: it holds only what happened during the calls
    # (a file the person edited between two calls stays theirs)
    first: dict[str, FileState] = {}
    for call in calls:
        first.setdefault(call.path, call.before)
        after[call.path] = call.after
    before.update(first)
    changed = [(p, b, after[p]) for p, b in before.items() if not same_state(b, after[p])]
    if not changed:
        if snapshots is not None:
            snapshots.tidy()
        return
    if snapshots is not None and needs_store([s for _, b, a in changed for s in (b, a)]):
        try:
            snapshots.store.keep(message_id, snapshots.trees(calls))
        except SnapshotError as exc:  # the checkpoints stand; undo says if a blob is gone
            snapshots.warnings.append(f"The snapshots of this request were not kept: {exc}")
    store.add_checkpoints(session_id, message_id, changed)
    if snapshots is not None:
        snapshots.tidy()


def _calls(
    store: Store, snapshots: CallSnapshots | None, session_id: str, mark: int
) -> list[CallChange]:
    """The changes the request's calls recorded: the session's and its sub-agents' (other
    sessions of the project may run beside it, in the web page)."""
    if snapshots is None:
        return []
    calls = snapshots.since(mark)
    ours = {session_id}
    for other in {c.session_id for c in calls} - ours:
        info = store.get_session(other)
        if info is not None and info.parent_id == session_id:
            ours.add(other)
    return [c for c in calls if c.session_id in ours]


def _requests(store: Store, session_id: str) -> list[list[Checkpoint]]:
    """The session's checkpoints, one list per request, oldest first."""
    grouped: dict[str, list[Checkpoint]] = {}
    for point in store.checkpoints(session_id):
        grouped.setdefault(point.message_id, []).append(point)
    return list(grouped.values())


def changed_files(store: Store, *, session_id: str, message_id: str, root: Path) -> list[str]:
    """The project-relative files the request of `message_id` changed."""
    return [relative(p.path, root) for p in store.checkpoints(session_id)
            if p.message_id == message_id]


def undo(store: Store, *, session_id: str, root: Path, steps: int = 1) -> UndoResult:
    """Put back the files of the last `steps` requests still done, newest first."""
    return _repeat(store, "undo", session_id=session_id, root=root, steps=steps)


def redo(store: Store, *, session_id: str, root: Path, steps: int = 1) -> UndoResult:
    """Make again the changes of the earliest requests undone last."""
    return _repeat(store, "redo", session_id=session_id, root=root, steps=steps)


def _repeat(
    store: Store, direction: Direction, *, session_id: str, root: Path, steps: int
) -> UndoResult:
    results: list[UndoResult] = []
    for _ in range(max(1, steps)):
        result = _one(store, direction, session_id=session_id, root=root)
        results.append(result)
        if not result.ok:
            break
    if len(results) == 1:
        return results[0]
    return UndoResult(
        ok=all(r.ok for r in results),
        summary="\n".join(r.summary for r in results),
        files=[f for r in results for f in r.files],
        conflicts=[c for r in results for c in r.conflicts],
    )


def _target(requests: list[list[Checkpoint]], direction: Direction) -> list[Checkpoint] | None:
    """Undo: the last request done. Redo: the request undone last, unless a request still
    done was made after it was undone (a new change ends what can be redone)."""
    done = [r for r in requests if r[0].state == "done"]
    if direction == "undo":
        return done[-1] if done else None
    latest = max((r[0].created for r in done), default=0.0)
    undone = [r for r in requests if r[0].undone is not None and r[0].undone >= latest]
    return max(undone, key=lambda r: r[0].undone or 0.0) if undone else None


def _one(store: Store, direction: Direction, *, session_id: str, root: Path) -> UndoResult:
    request = _target(_requests(store, session_id), direction)
    if request is None:
        return UndoResult(False, f"Nothing to {direction}: no request of this session "
                          + ("changed files." if direction == "undo" else "was undone last."))
    expected = [(p.path, p.after if direction == "undo" else p.before) for p in request]
    conflicts = [relative(path, root) for path, want in expected if not is_now(path, want)]
    if conflicts:
        return UndoResult(
            False,
            f"Cannot {direction}: changed since the request: {_short(conflicts, ', ')}. "
            "Nothing was changed; put these files back, or edit them by hand.",
            conflicts=conflicts,
        )
    targets = [(p.path, p.before if direction == "undo" else p.after) for p in request]
    try:
        lines = put_all(targets, root=root, store=_snapshot_store(root, targets))
    except SnapshotError as exc:
        return UndoResult(False, f"Cannot {direction}: {exc}; the snapshots of this request "
                          "were pruned or lost. Nothing was changed.")
    store.set_checkpoint_state(request[0].message_id, "undone" if direction == "undo" else "done")
    asked = _request_text(store, session_id, request[0].message_id)
    _tell_model(store, session_id, direction, asked, lines)
    summary = f"{'Undid' if direction == 'undo' else 'Redid'} “{asked}”:\n" + _short(
        [f"  {line}" for line in lines], "\n")
    if direction == "undo":
        summary += _untracked_note(store, session_id, request[0].message_id, root)
    return UndoResult(True, summary, files=[relative(p.path, root) for p in request])


def _short(items: list[str], sep: str) -> str:
    """The first SHOWN_LINES of `items` joined, and how many more."""
    shown = sep.join(items[:SHOWN_LINES])
    more = len(items) - SHOWN_LINES
    return shown + (f"{sep}{'  ' if sep == chr(10) else ''}… and {more} more" if more > 0
                    else "")


def _snapshot_store(root: Path, targets: list[tuple[str, FileState]]) -> WorkTreeStore | None:
    """The project's snapshot store, when a command's change is to be put back."""
    if not needs_store([state for _, state in targets]):
        return None
    from totem.settings.paths import data_dir
    from totem.snapshots.worktree import WorkTreeStore, store_folder

    return WorkTreeStore(root, store_folder(data_dir(), root))


def _request_text(store: Store, session_id: str, message_id: str) -> str:
    for message in store.messages(session_id):
        if message.id == message_id:
            text = message.text().strip().splitlines()
            return (text[0][:80] if text else "") or "(empty request)"
    return "(request)"


def _tell_model(
    store: Store, session_id: str, direction: Direction, asked: str, lines: list[str]
) -> None:
    """A note in the history: the model's next request sees the files went back."""
    if direction == "undo":
        text = (f"[totem] The person undid the file changes made for the request “{asked}”: "
                f"{_short(lines, '; ')}. Those files are now as they were before that request; "
                "do not assume its changes exist.")
    else:
        text = (f"[totem] The person redid the file changes of the request “{asked}”: "
                f"{_short(lines, '; ')}. Those files again hold what that request wrote.")
    message = Message(new_id("msg"), session_id, "user", [TextPart(text, synthetic=True)])
    store.add_message(message)


def _untracked_note(store: Store, session_id: str, message_id: str, root: Path) -> str:
    """A word on what undo could not see: with no snapshots of the work tree (git missing,
    or snapshots off), files changed by the request's bash commands were not tracked."""
    if not _ran_bash(store.messages(session_id), message_id) or _commands_tracked(root):
        return ""
    note = ("\nThe request also ran bash commands: files they changed are not tracked (no "
            "snapshots of the work tree: git is missing, or `snapshots` is off) and were not "
            "put back.")
    stat = _git_diff_stat(root)
    if stat is not None:
        note += " `git diff` shows the working tree's changes:\n" + (stat or "  (no changes)")
    return note


def _commands_tracked(root: Path) -> bool:
    from totem.settings.paths import data_dir
    from totem.snapshots.git import git_program
    from totem.snapshots.worktree import store_folder

    return git_program() is not None and store_folder(data_dir(), root).is_dir()


def _ran_bash(messages: list[Message], message_id: str) -> bool:
    inside = False
    for message in messages:
        if message.id == message_id:
            inside = True
            continue
        if inside and message.role == "user" and any(
            isinstance(p, TextPart) and not p.synthetic for p in message.parts
        ):
            break
        if inside and any(isinstance(p, ToolPart) and p.name == "bash" for p in message.parts):
            return True
    return False


def _git_diff_stat(root: Path) -> str | None:
    """`git diff --stat` of the project, or None when it is not a git repository."""
    try:
        inside = subprocess.run(
            ["git", "rev-parse", "--is-inside-work-tree"], cwd=root, capture_output=True,
            text=True, timeout=10,
        )
        if inside.returncode != 0:
            return None
        diff = subprocess.run(["git", "diff", "--stat"], cwd=root, capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return "\n".join(f"  {line}" for line in diff.stdout.rstrip().splitlines())
