"""How long an edit's result waits for the language server's diagnostics.

    .venv/bin/python bench/lsp.py [--sessions 3] [--edits 20]

Each session is a fresh project (pyproject.toml + app.py for Python, tsconfig.json + app.ts
for TypeScript) and a fresh set of language servers, as one totem session has; the real edit
tool makes `--edits` edits of the file, every fourth one a type error that the next one
fixes. What is timed is what the after-write hook adds to the edit's result (the wait for
the server: its start and first analysis on the first edit). Printed, medians over the
sessions: the first edit's wait, the median and the slowest of the later ones, and how many
results carried diagnostics.

Needs basedpyright-langserver (pip install '.[lsp]') and typescript-language-server with
typescript (npm, tests/node).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from pathlib import Path

from totem.abort import AbortSignal
from totem.lsp.launch import find_program
from totem.lsp.servers import LanguageServers
from totem.policy.permission import PermissionService
from totem.settings.lsp import LspServer, LspSettings
from totem.tools.base import ToolContext, ToolSettings, parse_arguments
from totem.tools.edit import Edit

HERE = Path(__file__).resolve().parent
TS_SERVER = HERE.parent / "tests" / "node" / "node_modules" / ".bin" / "typescript-language-server"

# language -> (marker file and its text, file name, a line, its value, the type error)
LANGUAGES = {
    "python": (("pyproject.toml", "[project]\nname = 'bench'\nversion = '0'\n"), "app.py",
               "count: int = {}\n", 'count: int = "{}"\n',
               "".join(f"def add{i}(a: int, b: int) -> int:\n    return a + b\n\n\n"
                       for i in range(30))),
    "typescript": (("tsconfig.json", '{"compilerOptions": {"strict": true}}\n'), "app.ts",
                   "export const count: number = {};\n", 'export const count: number = "{}";\n',
                   "".join(f"export function add{i}(a: number, b: number): number {{\n"
                           "  return a + b;\n}\n" for i in range(30))),
}


def server_for(language: str) -> LspServer:
    if language == "python":
        program = find_program("basedpyright-langserver")
        if program is None:
            raise SystemExit("basedpyright-langserver is not installed: pip install '.[lsp]'")
        return LspServer("python", (program, "--stdio"), frozenset((".py",)))
    if not TS_SERVER.exists():
        raise SystemExit("typescript-language-server is missing: cd tests/node && npm install")
    return LspServer("typescript", (str(TS_SERVER), "--stdio"), frozenset((".ts",)))


async def session(language: str, edits: int) -> tuple[list[float], int]:
    """The waits of one session's edits, in order, and how many results had diagnostics."""
    (marker, marker_text), name, good, bad, body = LANGUAGES[language]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / marker).write_text(marker_text)
        (root / name).write_text(body + good.format(0))
        servers = LanguageServers(root, LspSettings((server_for(language),)))
        permission = PermissionService(rules=[], mode="yes", project=str(root))
        current = good.format(0)
        waits, noted = [], 0
        for n in range(1, edits + 1):
            line = (bad if n % 4 == 0 else good).format(n)
            ctx = ToolContext(root=root, session_id="bench", call_id=f"call_{n}",
                              abort=AbortSignal(), permission=permission,
                              settings=ToolSettings(), tool_name="edit",
                              after_write=[servers.after_write])
            args = parse_arguments(Edit(), {"path": name, "old_string": current,
                                            "new_string": line})
            result = await Edit().run(args, ctx)
            current = line
            waits.append(float(ctx.meta["diagnostics_wait"]))
            noted += "[Diagnostics]" in result.output
        await servers.aclose()
        return waits, noted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--edits", type=int, default=20)
    args = parser.parse_args()
    print(f"diagnostics wait per edit: {args.sessions} sessions of {args.edits} edits "
          "(every 4th a type error, fixed by the next)")
    for language in LANGUAGES:
        runs = [asyncio.run(session(language, args.edits)) for _ in range(args.sessions)]
        first = statistics.median(waits[0] for waits, _ in runs)
        later = statistics.median(statistics.median(waits[1:]) for waits, _ in runs)
        slowest = statistics.median(max(waits[1:]) for waits, _ in runs)
        noted = statistics.median(n for _, n in runs)
        print(f"  {language:11} first {first * 1000:7.0f} ms   later: median "
              f"{later * 1000:5.0f} ms, slowest {slowest * 1000:5.0f} ms   "
              f"results with diagnostics {noted:g} of {args.edits}")


if __name__ == "__main__":
    main()
