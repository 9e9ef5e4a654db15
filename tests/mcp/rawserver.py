"""A misbehaving MCP server over stdio, in plain JSON-RPC lines (no SDK), for failure tests.

python rawserver.py badschema     lists a tool whose schema breaks the MCP schema itself
python rawserver.py oddschema     lists a good tool and one whose input schema is not JSON Schema
python rawserver.py exit          writes a line to stderr and exits before the handshake
python rawserver.py silent        reads requests and never answers
"""

from __future__ import annotations

import json
import sys
import time

GOOD = {"name": "ping", "description": "Answers pong.", "inputSchema": {"type": "object"}}
BROKEN = {
    "name": "broken",
    "description": "Bad.",
    "inputSchema": {"type": "object", "properties": 5},
}
ODD = {
    "name": "odd",
    "description": "Not JSON Schema.",
    "inputSchema": {"type": "object", "properties": {"x": {"type": "banana"}}},
}


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main(mode: str) -> None:
    if mode == "exit":
        print("rawserver: cannot start, missing configuration", file=sys.stderr, flush=True)
        sys.exit(2)
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request or mode == "silent":
            continue
        method = request["method"]
        if method == "initialize":
            result: dict[str, object] = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "0"},
            }
        elif method == "tools/list":
            result = {"tools": [GOOD, BROKEN] if mode == "badschema" else [GOOD, ODD]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "pong"}]}
        else:
            send(
                {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}}
            )
            continue
        send({"jsonrpc": "2.0", "id": request["id"], "result": result})
    time.sleep(0)


if __name__ == "__main__":
    main(sys.argv[1])
