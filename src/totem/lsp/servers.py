"""A session's language servers: the after-write hook that gives an edit's new errors.

Each server starts on the first change of one of its files, once per session. One that is
not installed is skipped with one notice. One that exits or hangs is started again once;
when that one fails too, it is skipped for the rest of the session (a notice each time).
A wait is bounded: `first_wait` for a server's first diagnostics, `wait` for later ones.
A server with `roots` checks only the files of a project of its language: a file with a root
marker (pyproject.toml, tsconfig.json...) in its folder or one above it, up to the root; a
loose script starts no server and is not waited for.

What a change brought is what its errors are beyond the file's before it: the ones of the
previous check of the file, or, on its first change in the session, those of its content
before the change (asked of the server only when the new content has errors at all).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

from totem.events import Notice
from totem.lsp.launch import Launch, server_argv
from totem.lsp.problems import (
    Problem,
    errors_of,
    new_problems,
    problem_of,
    report,
    report_left,
)
from totem.settings.lsp import LspServer, LspSettings

if TYPE_CHECKING:
    from totem.lsp.connection import Connection
    from totem.tools.base import ToolContext

__all__ = ["LanguageServers", "Say"]

Level: TypeAlias = Literal["info", "warning", "error"]
Say: TypeAlias = Callable[[str, Level], None]  # how a notice reaches the person

MAX_BYTES = 2_000_000  # larger files are not sent to a server
STARTS = 2  # a server is started at most this often in a session (a restart once)


@dataclass(slots=True)
class _Slot:
    server: LspServer
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    connection: Connection | None = None
    starts: int = 0
    skipped: bool = False


class LanguageServers:
    def __init__(self, root: Path, settings: LspSettings, *, launch: Launch = server_argv) -> None:
        self.root = root
        self._real_root = root.resolve()
        self.settings = settings
        self.launch = launch  # where a sandbox wraps the servers' command lines
        self._slots: dict[str, _Slot] = {}
        self._known: dict[Path, list[Problem]] = {}  # each file's problems at its last check
        self._reported: set[Path] = set()  # files with reported errors not all fixed yet
        self._marked: dict[tuple[Path, tuple[str, ...]], bool] = {}  # folder -> has a root

    def _in_project(self, server: LspServer, path: Path) -> bool:
        """Whether `path` belongs to a project of the server's language (see `roots`)."""
        if not server.roots:
            return True
        folder = path.parent
        key = (folder, server.roots)
        if key not in self._marked:
            found = any((folder / name).is_file() for name in server.roots)
            if not found and self._real_root in folder.parents:
                found = self._in_project(server, folder)
            self._marked[key] = found
        return self._marked[key]

    def handles(self, path: Path) -> bool:
        return self.settings.for_suffix(path.suffix) is not None

    async def after_write(self, ctx: ToolContext, path: Path) -> str:
        """The after-write hook (tools/hooks.py): the new errors of `path`, as a note."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        emit = ctx.emit

        def say(text: str, level: Level) -> None:
            if emit is not None:
                emit(Notice(text, level))

        note = await self.check(path, ctx.before.get(path), relative=ctx.relative(path),
                                say=say)
        ctx.meta["diagnostics_wait"] = f"{loop.time() - started:.3f}"
        if not note:
            return ""
        shown = ctx.meta.get("diagnostics", "")
        ctx.meta["diagnostics"] = f"{shown}\n{note}" if shown else note
        return "\n\n[Diagnostics] " + note

    async def check(self, path: Path, before: bytes | None, *, relative: str,
                    say: Say | None = None) -> str:
        """The note on `path` just changed (its content before was `before`, None for a new
        file): its new errors; after a fix of errors reported before, those still left, down to
        "no errors now"; "" when there is nothing new to say."""
        server = self.settings.for_suffix(path.suffix)
        if server is None or not path.is_file() or path.stat().st_size > MAX_BYTES:
            return ""
        if not self._in_project(server, path):
            return ""
        slot = self._slots.setdefault(server.name, _Slot(server))
        async with slot.lock:
            while not slot.skipped:
                connection = await self._connection(slot, say)
                if connection is None:
                    return ""
                from totem.lsp.connection import ServerFailed, Slow

                try:
                    return await self._check(connection, server, path, before, relative)
                except Slow as exc:
                    _say(say, f"{server.name} language server: {exc} for {relative}; "
                              "the edit was not checked.", "warning")
                    return ""
                except ServerFailed as exc:
                    await self._failed(slot, str(exc), say)
        return ""

    async def _connection(self, slot: _Slot, say: Say | None) -> Connection | None:
        """The slot's started server: started now when it has none (None: skipped)."""
        while slot.connection is None and not slot.skipped:
            argv = self.launch(slot.server, self.root)
            if argv is None:
                slot.skipped = True
                _say(say, f"No diagnostics for {slot.server.name} files: its language server "
                          f"{slot.server.command[0]} is not installed.", "info")
                return None
            from totem.lsp.connection import Connection, ServerFailed

            connection = Connection(slot.server.name, argv, self.root)
            slot.starts += 1
            try:
                await connection.start(slot.server.first_wait)
            except ServerFailed as exc:
                await connection.close()
                await self._failed(slot, str(exc), say, started=False)
                continue
            slot.connection = connection
        return slot.connection

    async def _failed(self, slot: _Slot, why: str, say: Say | None, *,
                      started: bool = True) -> None:
        if slot.connection is not None:
            await slot.connection.close()
            slot.connection = None
        name = f"The {slot.server.name} language server ({slot.server.command[0]})"
        if slot.starts >= STARTS:
            slot.skipped = True
            _say(say, f"{name} failed again ({why}); its diagnostics are off for the rest "
                      "of the session.", "warning")
        else:
            _say(say, f"{name} {'stopped' if started else 'did not start'} ({why}); "
                      "starting it again.", "warning")

    async def _check(self, connection: Connection, server: LspServer, path: Path,
                     before: bytes | None, relative: str) -> str:
        wait = server.first_wait if connection.checks == 0 else server.wait
        text = path.read_bytes().decode("utf-8", "replace")
        after = [problem_of(d) for d in await connection.diagnostics(path, text, wait)]
        known = self._known.get(path)
        if known is None:
            known = []
            if before is not None and errors_of(after):
                old = before.decode("utf-8", "replace")
                known = [problem_of(d) for d in await connection.diagnostics(path, old, wait)]
                after = [problem_of(d) for d in await connection.diagnostics(path, text, wait)]
        self._known[path] = after
        name = Path(server.command[0]).name
        note = self._note(path, relative, name, known, after)
        elsewhere = await self._elsewhere(connection, path.resolve(), wait, name)
        return "\n".join(n for n in (note, *elsewhere) if n)

    def _note(self, path: Path, relative: str, name: str, known: list[Problem],
              after: list[Problem]) -> str:
        """What the check of `path` says: its new errors, or what a fix left."""
        new = new_problems(errors_of(known), errors_of(after))
        if new:
            self._reported.add(path)
            return report(relative, name, new, total=len(errors_of(after)))
        if path not in self._reported:
            return ""
        left = errors_of(after)
        if not left:
            self._reported.discard(path)
            return f"{relative}: no errors now, from {name}."
        fixed = len(errors_of(known)) - len(left)
        if fixed <= 0:
            return ""  # the errors reported stay as they were: nothing new to say
        return report_left(relative, name, left, fixed=fixed)

    async def _elsewhere(self, connection: Connection, path: Path, wait: float,
                         name: str) -> list[str]:
        """The new errors of the project's other files, where the server offers workspace
        diagnostics (a changed name breaks its callers); a file's first report is taken as
        it was, not as new."""
        if not connection.workspace:
            return []
        found = await connection.workspace_diagnostics(wait)
        notes = []
        for uri, diagnostics in sorted(found.items()):
            other = _path_of(uri)
            if other is None or other == path or self._real_root not in other.parents:
                continue
            after = [problem_of(d) for d in diagnostics]
            known = self._known.get(other)
            self._known[other] = after
            new = new_problems(errors_of(known or []), errors_of(after))
            relative = other.relative_to(self._real_root).as_posix()
            if other in self._reported and not errors_of(after):
                self._reported.discard(other)
                notes.append(f"{relative}: no errors now, from {name}.")
            if known is None or not new:
                continue
            self._reported.add(other)
            notes.append(report(relative, name, new, total=len(errors_of(after))))
        return notes

    async def aclose(self) -> None:
        """Stop every server this session started."""
        for slot in self._slots.values():
            if slot.connection is not None:
                await slot.connection.close()
                slot.connection = None


def _path_of(uri: str) -> Path | None:
    """The file a file: URI names (resolved), or None for another scheme."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path)).resolve()


def _say(say: Say | None, text: str, level: Level) -> None:
    if say is not None:
        say(text, level)
