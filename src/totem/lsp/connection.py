"""One language server over stdio: started, given a file's text, its diagnostics awaited, stopped.

The protocol is pygls's `LanguageClient` (JSON-RPC framing, requests and notifications as
lsprotocol types); this module only says what a check needs of it. Which diagnostics are read
is chosen from what the server says it offers at initialize:

- a server that offers pulled diagnostics (LSP 3.17 `diagnosticProvider`: pyright,
  TypeScript 7's `tsc --lsp`) is asked `textDocument/diagnostic` after each change, and its
  answer is the file's diagnostics (a server that offers only these pushes nothing); one
  that offers `workspace/diagnostic` is asked for the other files' too, with the result ids
  of its last answer, so only the files whose problems changed come back;
- otherwise the ones it pushes (`textDocument/publishDiagnostics`) are awaited: a server that
  says which version its diagnostics are of (gopls, rust-analyzer) is read when it answers for
  the version sent; one that does not (typescript-language-server) sends nothing at all when a
  clean file stays clean, so the file is closed and opened again with its new text, which
  always brings an answer: the empty one for the close is skipped, and the answer after it is
  taken once the server has been quiet for `SETTLE` seconds (it sends syntax, then semantic
  problems).

A wait that runs out asks the server a question it must answer (an unknown method): an answer
says it is busy (`Slow`), none says it hangs (`ServerFailed`, hung). A server that exits is
`ServerFailed` at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["LANGUAGE_IDS", "Connection", "ServerFailed", "Slow"]

SETTLE = 0.15  # seconds of quiet after an unversioned server's first answer
# the errors of a diagnostic request that mean "ask again": ServerCancelled, ContentModified
_ASK_AGAIN = (-32802, -32801)
PROBE = 2.0  # seconds a server that is not hung takes to answer an unknown request
STOP = 2.0  # seconds given to shut down before the server is killed
LANGUAGE_IDS = {
    ".py": "python", ".pyi": "python", ".ts": "typescript", ".mts": "typescript",
    ".cts": "typescript", ".tsx": "typescriptreact", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "javascriptreact", ".go": "go", ".rs": "rust", ".c": "c",
    ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".java": "java", ".rb": "ruby",
    ".php": "php", ".lua": "lua", ".zig": "zig", ".cs": "csharp", ".swift": "swift",
    ".kt": "kotlin", ".sh": "shellscript", ".css": "css", ".html": "html", ".json": "json",
}
# pygls logs an unknown notification of the server's ($/typescriptVersion) as a warning,
# which Python would print on the person's terminal
logging.getLogger("pygls").addHandler(logging.NullHandler())
logging.getLogger("pygls").propagate = False


class ServerFailed(Exception):
    """The server exited (`hung` False) or stopped answering (`hung` True)."""

    def __init__(self, message: str, *, hung: bool) -> None:
        super().__init__(message)
        self.hung = hung


class Slow(Exception):
    """No diagnostics in time, though the server still answers (a long first analysis)."""


@dataclass(slots=True)
class _Published:
    version: int | None
    diagnostics: list[Any]


class Connection:
    """A started server for one project (`start`), asked about one file at a time."""

    def __init__(self, name: str, argv: list[str], root: Path) -> None:
        self.name = name
        self.argv = argv
        self.root = root
        self.checks = 0  # diagnostics given so far (the first wait is the long one)
        self._client: Any = None
        self._process: Any = None
        self._exited = False
        self._answering = False  # initialized, and not found hung since: worth a shutdown
        self._stderr = b""  # the end of what it wrote there, for the notice of a crash
        self._tasks: list[asyncio.Task[None]] = []
        self._inbox: dict[str, list[_Published]] = {}
        self._arrived = asyncio.Event()
        self._open: dict[str, int] = {}  # uri -> the version last sent
        self._answered: set[str] = set()  # uris the server has published diagnostics for
        self._versioned: bool | None = None  # whether its diagnostics name their version
        self._pulls = False  # it offers textDocument/diagnostic: asked, not awaited
        self._identifier: str | None = None  # the name its diagnostic option gives, if any
        self._pulled: dict[str, list[Any]] = {}  # uri -> the last full report's items
        self.workspace = False  # it offers workspace/diagnostic: the other files' problems
        self._results: dict[str, str] = {}  # uri -> its last workspace report's result id
        self._gone = asyncio.Event()  # set when the server exits

    async def start(self, timeout: float) -> None:
        """Start the server and initialize it; ServerFailed when it exits or hangs."""
        from lsprotocol import types as lsp
        from pygls.lsp.client import LanguageClient

        connection = self

        class Client(LanguageClient):
            async def server_exit(self, server: asyncio.subprocess.Process) -> None:
                connection._exited = True
                connection._arrived.set()
                connection._gone.set()

        client = Client("totem", "1")
        self._client = client
        # pygls marks each handler it is given: every feature gets a function of its own
        client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(
            lambda params: self._on_publish(params))
        for method in (lsp.WINDOW_LOG_MESSAGE, lsp.WINDOW_SHOW_MESSAGE, "$/typescriptVersion",
                       lsp.PROGRESS, lsp.TELEMETRY_EVENT, lsp.CLIENT_REGISTER_CAPABILITY,
                       lsp.CLIENT_UNREGISTER_CAPABILITY, lsp.WINDOW_WORK_DONE_PROGRESS_CREATE):
            client.feature(method)(lambda params: None)
        client.feature(lsp.WORKSPACE_CONFIGURATION)(
            lambda params: [None for _ in params.items])
        client.feature(lsp.WORKSPACE_WORKSPACE_FOLDERS)(lambda params: [self._folder()])
        try:
            await client.start_io(self.argv[0], *self.argv[1:], cwd=str(self.root),
                                  start_new_session=True)
        except OSError as exc:
            raise ServerFailed(f"{self.argv[0]} could not start: {exc}", hung=False) from None
        self._process = client._server  # pygls keeps the process here; killed on stop
        self._tasks.append(asyncio.create_task(self._read_stderr()))
        params = lsp.InitializeParams(
            process_id=os.getpid(),
            root_uri=self.root.as_uri(),
            workspace_folders=[self._folder()],
            capabilities=lsp.ClientCapabilities(
                text_document=lsp.TextDocumentClientCapabilities(
                    publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(
                        version_support=True),
                    diagnostic=lsp.DiagnosticClientCapabilities(dynamic_registration=False),
                    synchronization=lsp.TextDocumentSyncClientCapabilities()),
                workspace=lsp.WorkspaceClientCapabilities(configuration=True,
                                                          workspace_folders=True)),
        )
        try:
            result = await asyncio.wait_for(client.initialize_async(params), timeout)
        except TimeoutError:
            raise ServerFailed(f"no answer to initialize in {timeout:g} s", hung=True) from None
        except Exception as exc:  # it exited: pygls fails the request with its exit code
            raise ServerFailed(self._exit_text(exc), hung=False) from None
        offered = result.capabilities.diagnostic_provider
        self._pulls = offered is not None
        self._identifier = getattr(offered, "identifier", None)
        self.workspace = bool(getattr(offered, "workspace_diagnostics", False))
        client.initialized(lsp.InitializedParams())
        self._answering = True

    def _folder(self) -> Any:
        from lsprotocol import types as lsp

        return lsp.WorkspaceFolder(uri=self.root.as_uri(), name=self.root.name or "project")

    def _on_publish(self, params: Any) -> None:
        self._inbox.setdefault(params.uri, []).append(
            _Published(params.version, list(params.diagnostics)))
        self._arrived.set()

    async def _read_stderr(self) -> None:
        stream = self._process.stderr
        while chunk := await stream.read(4096):
            self._stderr = (self._stderr + chunk)[-2000:]

    def _exit_text(self, exc: BaseException | None = None) -> str:
        code = self._process.returncode if self._process is not None else None
        said = self._stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        return (f"it exited{f' with code {code}' if code is not None else ''}"
                + (f": {said[0][:200]}" if said else f" ({exc})" if exc else ""))

    async def diagnostics(self, path: Path, text: str, timeout: float) -> list[Any]:
        """The server's diagnostics for `path` holding `text` (lsprotocol Diagnostics)."""
        if self._exited:
            raise ServerFailed(self._exit_text(), hung=False)
        uri = path.as_uri()
        skip = self._send(uri, path, text)
        try:
            if self._pulls:
                found = await self._pull(uri, timeout)
            else:
                found = await self._wait(uri, self._open[uri], timeout, skip=skip)
        except TimeoutError:
            if await self._answers():
                raise Slow(f"no diagnostics in {timeout:g} s") from None
            self._answering = False
            raise ServerFailed(f"no answer in {timeout:g} s", hung=True) from None
        self.checks += 1
        return found

    def _send(self, uri: str, path: Path, text: str) -> int:
        """Give the server the file's text; how many answers to skip (a close's)."""
        from lsprotocol import types as lsp

        client = self._client
        self._inbox.pop(uri, None)
        version = self._open.get(uri)
        item = lsp.TextDocumentItem(uri=uri, language_id=LANGUAGE_IDS.get(
            path.suffix.lower(), self.name), version=(version or 0) + 1, text=text)
        self._open[uri] = item.version
        try:
            if version is None:
                client.text_document_did_open(lsp.DidOpenTextDocumentParams(item))
            elif self._pulls or self._versioned is not False:
                client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                    lsp.VersionedTextDocumentIdentifier(uri=uri, version=item.version),
                    [lsp.TextDocumentContentChangeWholeDocument(text=text)]))
            else:
                client.text_document_did_close(lsp.DidCloseTextDocumentParams(
                    lsp.TextDocumentIdentifier(uri=uri)))
                client.text_document_did_open(lsp.DidOpenTextDocumentParams(item))
                return 1 if uri in self._answered else 0
        except RuntimeError:  # pygls: the client stopped, as the server exited
            raise ServerFailed(self._exit_text(), hung=False) from None
        return 0

    async def _wait(self, uri: str, version: int, timeout: float, *, skip: int) -> list[Any]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        unversioned: list[_Published] = []
        while True:
            for published in self._inbox.pop(uri, []):
                self._answered.add(uri)
                self._versioned = published.version is not None
                if published.version is None:
                    unversioned.append(published)
                elif published.version >= version:
                    return published.diagnostics
            if self._exited:
                raise ServerFailed(self._exit_text(), hung=False)
            left = deadline - loop.time()
            if len(unversioned) > skip:
                if not await self._next(min(SETTLE, max(left, 0.0))):
                    return unversioned[-1].diagnostics
                continue
            if left <= 0:
                if unversioned:  # it sent nothing for the close after all
                    return unversioned[-1].diagnostics
                raise TimeoutError
            await self._next(left)

    async def _pull(self, uri: str, timeout: float) -> list[Any]:
        """Ask the server for the file's diagnostics (textDocument/diagnostic). A server that
        cancels the request because the text changed under it is asked again."""
        from lsprotocol import types as lsp

        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        params = lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri),
                                              identifier=self._identifier)
        while True:
            request = asyncio.ensure_future(self._client.text_document_diagnostic_async(params))
            gone = asyncio.ensure_future(self._gone.wait())
            done, _ = await asyncio.wait({request, gone}, timeout=max(deadline - loop.time(), 0),
                                         return_when=asyncio.FIRST_COMPLETED)
            gone.cancel()
            if request not in done:
                request.cancel()
                if self._exited:
                    raise ServerFailed(self._exit_text(), hung=False)
                raise TimeoutError
            try:
                report = request.result()
            except Exception as exc:  # the error answer (pygls's JsonRpcException), or the exit
                if self._exited:
                    raise ServerFailed(self._exit_text(), hung=False) from None
                retry = getattr(exc, "code", None) in _ASK_AGAIN
                if not retry or loop.time() >= deadline:
                    raise ServerFailed(f"its diagnostics failed: {exc}", hung=False) from None
                await asyncio.sleep(SETTLE)
                continue
            if getattr(report, "kind", "full") == "full":
                self._pulled[uri] = list(report.items)
            return self._pulled.get(uri, [])

    async def workspace_diagnostics(self, timeout: float) -> dict[str, list[Any]]:
        """The problems of the project's files that changed since the last ask
        (workspace/diagnostic, sent with the result ids of the last answer: a file whose
        report is unchanged is left out); {} when the server does not answer in time."""
        from lsprotocol import types as lsp

        params = lsp.WorkspaceDiagnosticParams(
            previous_result_ids=[lsp.PreviousResultId(uri=uri, value=value)
                                 for uri, value in self._results.items()],
            identifier=self._identifier)
        try:
            report = await asyncio.wait_for(
                self._client.workspace_diagnostic_async(params), timeout)
        except TimeoutError:
            return {}
        except Exception:  # the error answer, or the exit (seen at the next check)
            return {}
        changed: dict[str, list[Any]] = {}
        for item in report.items or []:
            if item.result_id:
                self._results[item.uri] = item.result_id
            if getattr(item, "kind", "full") == "full":
                changed[item.uri] = list(item.items)
        return changed

    async def _next(self, timeout: float) -> bool:
        """Wait for the next publication (or the exit); False when none came in time."""
        self._arrived.clear()
        try:
            await asyncio.wait_for(self._arrived.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def _answers(self) -> bool:
        """Whether the server still answers a request (an unknown method gets an error)."""
        if self._exited:
            return False
        try:
            await asyncio.wait_for(
                self._client.protocol.send_request_async("totem/alive", None), PROBE)
        except TimeoutError:
            return False
        except Exception:  # the error answer (method not found), or the exit
            return not self._exited
        return True

    async def close(self) -> None:
        """Shut the server down; kill it (and what it started) if it does not go. One that
        never answered or stopped answering is killed without asking."""
        client, process = self._client, self._process
        if client is None:
            return
        if process is not None and not self._answering and process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        elif not self._exited:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.shutdown_async(None), STOP)
                client.exit(None)
        if process is not None:
            try:
                await asyncio.wait_for(process.wait(), STOP)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.stop(), STOP)
        for task in self._tasks:
            task.cancel()
        self._client = None
