"""The store boundary. SQLite by default; a shared server could put PostgreSQL behind it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypeAlias

from totem.messages import Message, Part
from totem.policy.permission import Rule

__all__ = ["Blob", "Checkpoint", "FileState", "SessionInfo", "Store", "file_state",
           "ref_columns", "state_columns"]


@dataclass(slots=True)
class SessionInfo:
    id: str
    project: str
    title: str
    model: str
    parent_id: str | None
    created: float
    updated: float


@dataclass(frozen=True, slots=True)
class Blob:
    """A file kept in the project's snapshot store (totem.snapshots): its git mode (100644,
    100755 executable, 120000 a symbolic link) and the id of its content there."""

    mode: str
    oid: str

    def ref(self) -> str:
        return f"{self.mode} {self.oid}"

    @staticmethod
    def parse(ref: str) -> Blob:
        mode, _, oid = ref.partition(" ")
        return Blob(mode, oid)


# A file's state: its bytes (a file tool's snapshot), a blob of the snapshot store (what a
# command changed), or None: no file.
FileState: TypeAlias = bytes | Blob | None


def state_columns(*states: FileState) -> tuple[bytes | None, ...]:
    """The BLOB columns of checkpoint sides: a file tool's bytes, else NULL."""
    return tuple(s if isinstance(s, bytes) else None for s in states)


def ref_columns(*states: FileState) -> tuple[str | None, ...]:
    """The ref columns of checkpoint sides: "MODE OID" for a blob, else NULL."""
    return tuple(s.ref() if isinstance(s, Blob) else None for s in states)


def file_state(content: bytes | None, ref: str | None) -> FileState:
    """A checkpoint side from its two columns."""
    return Blob.parse(ref) if ref else content


@dataclass(slots=True)
class Checkpoint:
    """One file changed by one request: its state before and after."""

    id: int
    session_id: str
    message_id: str  # the user message of the request
    path: str
    before: FileState
    after: FileState
    state: str  # 'done' or 'undone'
    created: float
    undone: float | None  # when it was undone (None while done)


class Store(Protocol):
    def create_session(
        self, *, project: str, model: str, title: str = "", parent_id: str | None = None
    ) -> SessionInfo: ...

    def get_session(self, session_id: str) -> SessionInfo | None: ...

    def latest_session(self, project: str) -> SessionInfo | None: ...

    def list_sessions(self, project: str, limit: int = 50) -> list[SessionInfo]: ...

    def set_title(self, session_id: str, title: str) -> None: ...

    def add_message(self, message: Message) -> None: ...

    def save_part(self, message_id: str, index: int, part: Part) -> None: ...

    def finish_message(self, message: Message) -> None: ...

    def messages(self, session_id: str) -> list[Message]: ...

    def save_snapshot(
        self, *, session_id: str, call_id: str, path: str, content: bytes | None
    ) -> None: ...

    def snapshots(self, session_id: str) -> list[tuple[str, str, bytes | None]]: ...

    def snapshot_mark(self) -> int: ...

    def snapshots_after(
        self, session_id: str, mark: int, *, since: float = 0.0
    ) -> list[tuple[str, bytes | None]]: ...

    def add_checkpoints(
        self, session_id: str, message_id: str, files: list[tuple[str, FileState, FileState]]
    ) -> None: ...

    def checkpoints(self, session_id: str) -> list[Checkpoint]: ...

    def set_checkpoint_state(self, message_id: str, state: str) -> None: ...

    def remembered_rules(self, project: str) -> list[Rule]: ...

    def remember_rule(self, project: str, rule: Rule) -> None: ...

    def close(self) -> None: ...
