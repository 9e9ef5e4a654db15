"""Servers that fail, as real programs named by the config table: one that exits at start,
one that never answers initialize, one that crashes or hangs on the first file it is given
(a pygls server). Each is started again once, then skipped for the session with one notice;
every wait is bounded; a server that is not installed is one notice, never an error."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.support.language_servers import Edits, script_server
from totem.settings.lsp import LspServer
from totem.tools.write import Write

EXITS = """import sys
open(sys.argv[0] + ".starts", "a").write("start\\n")
sys.stderr.write("boom: no config\\n")
sys.exit(3)
"""
SILENT = """import sys, time
open(sys.argv[0] + ".starts", "a").write("start\\n")
time.sleep(600)
"""
# answers initialize, then does what ON_OPEN says with the first file it is sent
PYGLS = """import os, sys, time
from lsprotocol import types
from pygls.lsp.server import LanguageServer

open(sys.argv[0] + ".starts", "a").write("start\\n")
server = LanguageServer("failing", "1")

@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def opened(ls, params):
    ON_OPEN

server.start_io()
"""


def _starts(server: LspServer) -> int:
    log = Path(server.command[1] + ".starts")
    return len(log.read_text().splitlines()) if log.exists() else 0


def _three_writes(root: Path, server: LspServer) -> tuple[list[str], list[str]]:
    edits = Edits(root, server)

    async def session() -> list[str]:
        outputs = []
        for n in range(3):
            result, _ = await edits.call(Write(), path=f"f{n}.{server.name}", content="x\n")
            outputs.append(result.output)
        await edits.servers.aclose()
        return outputs

    return asyncio.run(session()), edits.said()


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def test_a_server_that_exits_at_start_is_started_again_once_then_skipped(
        tmp_path: Path) -> None:
    server = script_server(tmp_path, "exits", EXITS)
    outputs, said = _three_writes(_project(tmp_path), server)
    assert all(out.startswith("Created ") and "[Diagnostics]" not in out for out in outputs)
    name = f"The exits language server ({server.command[0]})"
    assert said == [
        f"{name} did not start (it exited with code 3: boom: no config); starting it again.",
        f"{name} failed again (it exited with code 3: boom: no config); its diagnostics "
        "are off for the rest of the session.",
    ]
    assert _starts(server) == 2


def test_a_server_that_never_answers_initialize_waits_first_wait_twice_then_is_skipped(
        tmp_path: Path) -> None:
    server = script_server(tmp_path, "silent", SILENT, first_wait=0.5)
    outputs, said = _three_writes(_project(tmp_path), server)
    assert all("[Diagnostics]" not in out for out in outputs)
    assert [s.split(" (")[-1] for s in said] == [
        "no answer to initialize in 0.5 s); starting it again.",
        "no answer to initialize in 0.5 s); its diagnostics are off for the rest of the "
        "session.",
    ]
    assert _starts(server) == 2


def test_a_server_that_crashes_on_a_file_is_restarted_once_then_skipped(
        tmp_path: Path) -> None:
    server = script_server(tmp_path, "crashes", PYGLS.replace(
        "ON_OPEN", 'sys.stderr.write("segfault, say\\\\n"); sys.stderr.flush(); os._exit(7)'))
    outputs, said = _three_writes(_project(tmp_path), server)
    assert all("[Diagnostics]" not in out for out in outputs)
    assert len(said) == 2 and "stopped (it exited with code 7" in said[0], said
    assert said[0].endswith("starting it again.")
    assert "failed again (it exited with code 7" in said[1]
    assert _starts(server) == 2


def test_a_server_that_hangs_on_a_file_is_restarted_once_then_skipped(tmp_path: Path) -> None:
    server = script_server(tmp_path, "hangs", PYGLS.replace("ON_OPEN", "time.sleep(600)"),
                           wait=0.5, first_wait=3)  # time for pygls to start under load
    outputs, said = _three_writes(_project(tmp_path), server)
    assert all("[Diagnostics]" not in out for out in outputs)
    assert [s.split(" (")[-1] for s in said] == [
        "no answer in 3 s); starting it again.",
        "no answer in 3 s); its diagnostics are off for the rest of the session.",
    ]
    assert _starts(server) == 2


def test_a_missing_server_is_one_notice_and_never_an_error(tmp_path: Path) -> None:
    server = LspServer("nosuch", ("no-such-language-server-here", "--stdio"),
                       frozenset((".nosuch",)))
    outputs, said = _three_writes(_project(tmp_path), server)
    assert all(out.startswith("Created ") for out in outputs)
    assert said == ["No diagnostics for nosuch files: its language server "
                    "no-such-language-server-here is not installed."]


# offers only pulled diagnostics (LSP 3.17), as TypeScript 7's `tsc --lsp` does: it never
# publishes; each line with BAD is an error; its first answer asks to be asked again
PULL_ONLY = """import sys
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

server = LanguageServer("pull-only", "1")
asked = []

@server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                types.DiagnosticOptions(inter_file_dependencies=False,
                                        workspace_diagnostics=False, identifier="fake"))
def diagnostic(ls, params):
    asked.append(params.identifier)
    open(sys.argv[0] + ".asked", "a").write(f"{params.identifier}\\n")
    if len(asked) == 1:
        raise JsonRpcException(code=-32802, message="busy: ask again",
                               data={"retriggerRequest": True})
    text = ls.workspace.get_text_document(params.text_document.uri).source
    items = [types.Diagnostic(
        range=types.Range(types.Position(n, 0), types.Position(n, len(line))),
        message=f"BAD on line {n + 1}", severity=types.DiagnosticSeverity.Error)
        for n, line in enumerate(text.splitlines()) if "BAD" in line]
    return types.RelatedFullDocumentDiagnosticReport(items=items)

server.start_io()
"""


def test_a_server_that_offers_only_pulled_diagnostics_is_asked_for_them(tmp_path: Path) -> None:
    server = script_server(tmp_path, "pull", PULL_ONLY, first_wait=10.0, wait=10.0)
    edits = Edits(_project(tmp_path), server)

    async def session() -> list[str]:
        outputs = []
        for content in ("ok\nBAD one\nok\n", "ok\nfine\nok\n", "still ok\n"):
            result, _ = await edits.call(Write(), path="f.pull", content=content)
            outputs.append(result.output)
        await edits.servers.aclose()
        return outputs

    broken, fixed, clean = asyncio.run(session())
    note = broken.split("[Diagnostics] ", 1)[1].splitlines()
    assert note[0].startswith("f.pull: 1 new error, from ")
    assert note[1:] == ["  line 2: error: BAD on line 2"]
    assert "f.pull: no errors now" in fixed
    assert "[Diagnostics]" not in clean
    assert edits.said() == []  # no wait ran out: nothing was "not checked"
    asked = Path(server.command[1] + ".asked").read_text().splitlines()
    assert asked == ["fake"] * 4  # the cancelled first ask, then one per write, by its name


# offers workspace diagnostics too: a line `needs X` is an error unless a line of some file
# of the folder is `X` (a name another file defines); each report has a result id
WORKSPACE = """import hashlib, pathlib, sys
from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("workspace", "1")
root = pathlib.Path.cwd()

def problems(text, defined):
    return [types.Diagnostic(
        range=types.Range(types.Position(n, 0), types.Position(n, len(line))),
        message=f"{line.split()[1]} is not defined anywhere",
        severity=types.DiagnosticSeverity.Error)
        for n, line in enumerate(text.splitlines())
        if line.startswith("needs ") and line.split()[1] not in defined]

def files():
    found = {p.as_uri(): p.read_text() for p in sorted(root.glob("*.ws"))}
    defined = {line for text in found.values() for line in text.splitlines()}
    return found, defined

@server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                types.DiagnosticOptions(inter_file_dependencies=True,
                                        workspace_diagnostics=True))
def diagnostic(ls, params):
    found, defined = files()
    text = ls.workspace.get_text_document(params.text_document.uri).source
    return types.RelatedFullDocumentDiagnosticReport(items=problems(text, defined))

@server.feature(types.WORKSPACE_DIAGNOSTIC)
def workspace(ls, params):
    found, defined = files()
    before = {p.uri: p.value for p in params.previous_result_ids}
    items = []
    for uri, text in found.items():
        made = problems(text, defined)
        rid = hashlib.sha1(repr([d.message for d in made]).encode()).hexdigest()
        if before.get(uri) == rid:
            items.append(types.WorkspaceUnchangedDocumentDiagnosticReport(
                uri=uri, result_id=rid, version=None))
        else:
            items.append(types.WorkspaceFullDocumentDiagnosticReport(
                uri=uri, items=made, result_id=rid, version=None))
    return types.WorkspaceDiagnosticReport(items=items)

server.start_io()
"""


def test_workspace_diagnostics_tell_the_errors_an_edit_made_in_other_files(
        tmp_path: Path) -> None:
    server = script_server(tmp_path, "ws", WORKSPACE, first_wait=10.0, wait=10.0)
    root = _project(tmp_path)
    (root / "lib.ws").write_text("total\n")
    (root / "use.ws").write_text("needs total\n")
    edits = Edits(root, server)

    async def session() -> list[str]:
        outputs = []
        for content in ("total\nmore\n", "sum\nmore\n", "sum\ntotal\n"):
            result, _ = await edits.call(Write(), path="lib.ws", content=content)
            outputs.append(result.output)
        await edits.servers.aclose()
        return outputs

    first, renamed, back = asyncio.run(session())
    assert "[Diagnostics]" not in first  # the other files' first reports: as they were
    note = renamed.split("[Diagnostics] ", 1)[1].splitlines()
    assert note[0].startswith("use.ws: 1 new error, from ")
    assert note[1:] == ["  line 1: error: total is not defined anywhere"]
    assert back.split("[Diagnostics] ", 1)[1].startswith("use.ws: no errors now, from ")
    assert edits.said() == []
