"""What MCP tool definitions cost per request: server-everything configured, first request.

    .venv/bin/python bench/mcp_schemas.py        (needs tests/node: npm install there)

Runs `totem run --yes` once per setting against the zero-latency fake server, with the
reference "everything" server configured over stdio, and prints the system prompt and the
tool definitions of the first request, in tokens (chars/4):

    no MCP server                 the built-in tools alone
    every schema (before)         tools.mcp_schema_budget very large: every schema in full
    default budget (after)        MCP tools by name and one line; mcp_tool_schema on demand
    8k window                     the default budget with a model whose window is 8,192

Measured 2026-12-01 (server-everything from tests/node, 17 tools over stdio; tokens):

    setting                      system+tools  system  MCP defs  MCP tools
    no MCP server                        3077    1202         0          0
    every schema (before)                4934    1202      1856         17
    default budget (after)               4934    1202      1856         17   (fits 2,000)
    8k window, default budget            3622    1202       545          1   (the listing)
    main before this change, 8k          4999    1202      1922         18   (deferred
                                           tools kept their whole description: no saving)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from totem.testing.fake_server import FakeOpenAIServer

HERE = Path(__file__).resolve().parent
TOTEM = Path(os.environ.get("TOTEM_BIN") or Path(sys.executable).parent / "totem")
EVERYTHING = (HERE.parent / "tests/node/node_modules/@modelcontextprotocol/server-everything"
              / "dist/index.js")

SETTINGS = {
    "no MCP server": {"mcp": False, "budget": None, "window": None},
    "every schema (before)": {"mcp": True, "budget": 10**6, "window": None},
    "default budget (after)": {"mcp": True, "budget": None, "window": None},
    "8k window, default budget": {"mcp": True, "budget": None, "window": 8192},
}


def config_text(url: str, *, mcp: bool, budget: int | None, window: int | None) -> str:
    model = f"{{bench-model: {{context: {window}}}}}" if window else "{}"
    lines = [
        "model: fake/bench-model",
        "providers:",
        f"  fake: {{kind: openai, base_url: '{url}', models: {model}}}",
    ]
    if budget is not None:
        lines += ["tools:", f"  mcp_schema_budget: {budget}"]
    if mcp:
        node = shutil.which("node") or "node"
        lines += ["mcp:", f"  everything: {{command: '{node}', args: ['{EVERYTHING}', 'stdio']}}"]
    return "\n".join(lines) + "\n"


def first_request(**setting: object) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root = base / "project"
        root.mkdir()
        server = FakeOpenAIServer([{"text": "Done."}], models=["bench-model"])
        with server.in_thread() as url:
            config = base / "config.yaml"
            config.write_text(config_text(url, **setting))  # type: ignore[arg-type]
            env = dict(os.environ, TOTEM_CONFIG=str(config), XDG_DATA_HOME=str(base / "data"),
                       XDG_CONFIG_HOME=str(base / "cfg"), XDG_CACHE_HOME=str(base / "cache"))
            done = subprocess.run([str(TOTEM), "run", "--yes", "say done"], cwd=root, env=env,
                                  capture_output=True, text=True, timeout=120)
            chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
        if done.returncode != 0 or not chats:
            raise SystemExit(f"bench run failed: exit {done.returncode}\n{done.stderr[-2000:]}")
        body = chats[0].body
        system = next(m["content"] for m in body["messages"] if m["role"] == "system")
        tools = body.get("tools", [])
        mcp = [t for t in tools if "__" in t["function"]["name"]
               or t["function"]["name"] == "mcp_tool_schema"]
        return {
            "total": (len(system) + len(json.dumps(tools))) / 4,
            "system": len(system) / 4,
            "mcp": len(json.dumps(mcp)) / 4,
            "mcp_tools": len(mcp),
        }


def main() -> int:
    if not EVERYTHING.is_file():
        print(f"missing {EVERYTHING}: run npm install in tests/node", file=sys.stderr)
        return 1
    print(f"{'setting':28} {'system+tools':>13} {'system':>7} {'MCP defs':>9} {'MCP tools':>10}")
    for name, setting in SETTINGS.items():
        row = first_request(**setting)
        print(f"{name:28} {row['total']:13.0f} {row['system']:7.0f} {row['mcp']:9.0f} "
              f"{row['mcp_tools']:10.0f}")
    print("tokens are chars/4 of the first request's system prompt and tool definitions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
