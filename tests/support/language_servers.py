"""The real language servers the diagnostics tests talk to, and edits made as the loop makes
them (a fresh ToolContext per call, the session's after-write hook given to it).

    python_server()      basedpyright-langserver, installed beside this Python ('.[lsp]')
    typescript_server()  typescript-language-server from tests/node (npm), with typescript
    typescript7_server() TypeScript 7's own `tsc --lsp --stdio` from tests/node (pull only)
    script_server(...)   a tiny program posing as a server (it crashes, hangs or logs starts)

A missing real server skips the test, unless TOTEM_REQUIRE_LSP=1 (scripts/test.sh) says it
must be there.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from tests.support.required import unavailable
from totem.abort import AbortSignal
from totem.events import Event
from totem.lsp.launch import find_program
from totem.lsp.servers import LanguageServers
from totem.policy.permission import PermissionService
from totem.settings.lsp import LspServer, LspSettings
from totem.tools.base import Tool, ToolContext, ToolResult, ToolSettings, parse_arguments

__all__ = ["Edits", "python_server", "script_server", "typescript7_server", "typescript_server"]

NODE_BIN = Path(__file__).resolve().parents[1] / "node" / "node_modules" / ".bin"


def python_server() -> LspServer:
    program = find_program("basedpyright-langserver")
    if program is None:
        unavailable("basedpyright-langserver is not installed (pip install '.[lsp]')",
                    required_by="TOTEM_REQUIRE_LSP")
    return LspServer("python", (program, "--stdio"), frozenset((".py",)),
                     roots=("pyproject.toml",), first_wait=60.0, wait=30.0)


def typescript_server() -> LspServer:
    program = NODE_BIN / "typescript-language-server"
    if not program.exists() or shutil.which("node") is None:
        unavailable("typescript-language-server is not in tests/node (npm install) or node "
                    "is not on PATH", required_by="TOTEM_REQUIRE_LSP")
    return LspServer("typescript", (str(program), "--stdio"), frozenset((".ts", ".js")),
                     roots=("tsconfig.json",), first_wait=60.0, wait=30.0)


def typescript7_server() -> LspServer:
    program = NODE_BIN.parent / "typescript7" / "bin" / "tsc"
    if not program.exists() or shutil.which("node") is None:
        unavailable("TypeScript 7 is not in tests/node (npm install) or node is not on PATH",
                    required_by="TOTEM_REQUIRE_LSP")
    return LspServer("typescript", (str(program), "--lsp", "--stdio"),
                     frozenset((".ts", ".js")), roots=("tsconfig.json",), first_wait=60.0,
                     wait=30.0)


def script_server(folder: Path, name: str, body: str, **settings: Any) -> LspServer:
    """A server whose program is `body`, a Python script written to `folder`."""
    script = folder / f"{name}.py"
    script.write_text(body)
    return LspServer(name, (sys.executable, str(script)), frozenset((f".{name}",)), **settings)


class Edits:
    """Tool calls on one project with one session's language servers, in one event loop."""

    def __init__(self, root: Path, *servers: LspServer) -> None:
        self.root = root
        self.servers = LanguageServers(root, LspSettings(servers))
        self.notices: list[Event] = []
        self.calls = 0

    async def call(self, tool: Tool, **arguments: Any) -> tuple[ToolResult, ToolContext]:
        self.calls += 1
        ctx = ToolContext(
            root=self.root, session_id="ses_lsp", call_id=f"call_{self.calls}",
            abort=AbortSignal(), settings=ToolSettings(), tool_name=tool.name,
            permission=PermissionService(rules=[], mode="yes", project=str(self.root)),
            emit=self.notices.append, after_write=[self.servers.after_write],
        )
        result = await tool.run(parse_arguments(tool, arguments), ctx)
        return result, ctx

    def said(self) -> list[str]:
        return [str(getattr(e, "text", e)) for e in self.notices]
