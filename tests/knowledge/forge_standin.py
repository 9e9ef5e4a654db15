"""A local stand-in for the Total.js documentation server (forge.totaljs.es/mcp/): the same tool
names, read-only, serving a few pages written for the tests (Python MCP SDK, stdio).

    python tests/knowledge/forge_standin.py
    FORGE_LOG=path     every call appended as a JSON line {"tool": ..., "arguments": ...}
    FORGE_DELAY=s      Forge_search waits this long first (a slow server)

Forge_search answers JSON text: {"results": [{"id", "title", "product", "url", "summary"}]}.
"""

from __future__ import annotations

import asyncio
import json
import os
import re

import mcp_types as types
from mcp.server.mcpserver import MCPServer

app = MCPServer("forge-standin")
READ_ONLY = types.ToolAnnotations(read_only_hint=True)
BASE = "https://docs.example.test/"


def _recipe() -> str:
    steps = "\n".join(
        f"{n}. Step {n} of writing a component: keep the element's state in closures and "
        "update the DOM only from self.setter, never from outside the component."
        for n in range(1, 60)
    )
    return (
        "# Create a component\n\nRECIPE-CREATE-COMPONENT. A jComponent 20 component is declared "
        "with COMPONENT('name', 'defaults', function(self, config, cls) { ... }). Build its "
        "element once in self.make and react to the bound value in self.setter.\n\n"
        "```js\nCOMPONENT('hello', function(self, config, cls) {\n\tself.make = function() {\n"
        "\t\tself.aclass(cls);\n\t};\n\tself.setter = function(value) {\n"
        "\t\tself.html(value);\n\t};\n});\n```\n\n" + steps
    )


PAGES = {
    "jcomponent/create-component": ("jcomponent", "Create a component", _recipe()),
    "jcomponent/setter": (
        "jcomponent", "Component setter and getter",
        "# self.setter(value, path, type)\n\nSETTER-PAGE. Called when the value at the "
        "component's path changes; self.getter(value) writes a value from the element back.",
    ),
    "jcomponent/configure": (
        "jcomponent", "Component configuration",
        "# self.configure(key, value, init)\n\nCONFIGURE-PAGE. Called for each key of the "
        "config attribute of a component.",
    ),
    "jcomponent/bindings": (
        "jcomponent", "Bindings with ui-bind",
        "# <ui-bind>\n\nBINDINGS-PAGE. Binds a path to an element without a component.",
    ),
    "total5/newaction": (
        "total5", "NEWACTION()",
        "# NEWACTION(id, options)\n\nNEWACTION-PAGE. Declares an action with its input, "
        "route and action function; ids are Namespace|action.",
    ),
    "total5/routing": (
        "total5", "Routing with ROUTE()",
        "# ROUTE(url, action)\n\nROUTE-PAGE. A route with a parameter: ROUTE('GET /orders/{id}/', "
        "read); the value is in $.params.id.",
    ),
    "total5/schemas": (
        "total5", "Schemas with NEWSCHEMA()",
        "# NEWSCHEMA(name, fn)\n\nSCHEMA-PAGE. Groups the actions of one kind of data.",
    ),
    "total5/database": (
        "total5", "DATA and the QueryBuilder",
        "# DATA\n\nDATA-PAGE. DATA.find('tbl_order').where('id', id).promise($) saves orders "
        "in the database.",
    ),
}


def _log(tool: str, arguments: dict[str, object]) -> None:
    path = os.environ.get("FORGE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


@app.tool(annotations=READ_ONLY)
async def Forge_search(query: str, product: str | None = None, limit: int = 8) -> str:
    """Search the Total.js documentation. product: 'jcomponent' or 'total5'."""
    _log("Forge_search", {"query": query, "product": product, "limit": limit})
    await asyncio.sleep(float(os.environ.get("FORGE_DELAY", "0")))
    wanted = _words(query)
    scored = []
    for pid, (prod, title, body) in PAGES.items():
        if product and prod != product:
            continue
        score = 3 * len(wanted & _words(title)) + len(wanted & _words(body))
        if score:
            scored.append((-score, pid))
    results = [
        {"id": pid, "title": PAGES[pid][1], "product": PAGES[pid][0], "url": BASE + pid,
         "summary": PAGES[pid][2][:80]}
        for _, pid in sorted(scored)[:limit]
    ]
    return json.dumps({"results": results})


@app.tool(annotations=READ_ONLY)
def Forge_page(id: str) -> str:
    """Read one documentation page by its id."""
    _log("Forge_page", {"id": id})
    if id not in PAGES:
        raise ValueError(f"no page {id}")
    return PAGES[id][2]


@app.tool(annotations=READ_ONLY)
def Forge_verify_api(name: str, product: str | None = None) -> str:
    """Say whether a function or option exists in Total.js or jComponent."""
    _log("Forge_verify_api", {"name": name, "product": product})
    known = {"COMPONENT", "NEWACTION", "ROUTE", "NEWSCHEMA", "self.setter", "self.make"}
    return f"{name}: {'exists' if name in known else 'not found'}"


@app.tool(annotations=READ_ONLY)
def Forge_source(path: str) -> str:
    """Read a file of the framework's source."""
    _log("Forge_source", {"path": path})
    return f"// source of {path} is not served by the stand-in"


if __name__ == "__main__":
    app.run("stdio")
