from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.local_http import Reply, http_server
from tests.support.tool_calls import Call, MakeContext
from totem.policy.permission import PermissionDenied, Rule
from totem.tools.base import ToolContext, ToolError
from totem.tools.websearch import WebSearch, websearch_tool

RESULTS = [
    {"title": "Python  docs", "url": "https://docs.python.org/", "content": "The\n official docs."},
    {"title": "PEP 8", "url": "https://peps.python.org/pep-0008/", "content": "Style " * 100},
    {"title": "", "url": "https://example.com/", "content": ""},
    {"title": "no url"},
]
MANY = [{"title": f"r{n}", "url": f"https://r{n}.example/", "content": "s"} for n in range(9)]


def searxng(path: str) -> Reply:
    query = parse_qs(urlsplit(path).query)
    if query.get("format") != ["json"]:
        return Reply(403, b"Forbidden")
    results = {"nothing": [], "many": MANY}.get(query["q"][0], RESULTS)
    body = json.dumps({"query": query["q"][0], "results": results}).encode()
    return Reply(body=body, headers={"Content-Type": "application/json"})


def test_absent_without_a_backend() -> None:
    assert websearch_tool(None) is None
    assert websearch_tool("  ") is None
    tool = websearch_tool("http://127.0.0.1:8888/")
    assert isinstance(tool, WebSearch) and tool.name == "websearch"
    assert tool.endpoint == "http://127.0.0.1:8888/search"
    assert WebSearch("http://h/searx/search").endpoint == "http://h/searx/search"


def test_results_as_a_numbered_list(ctx: ToolContext, call: Call) -> None:
    with http_server({"/search": searxng}) as server:
        tool = websearch_tool(server.base)
        assert tool is not None
        result = call(tool, ctx, query="python style", limit=3)
        assert server.requests == ["/search?q=python+style&format=json"]
    lines = result.output.splitlines()
    assert lines[:6] == [
        "1. Python docs",
        "   https://docs.python.org/",
        "   The official docs.",
        "2. PEP 8",
        "   https://peps.python.org/pep-0008/",
        lines[5],
    ]
    assert lines[5].startswith("   Style Style") and lines[5].endswith("...")
    assert len(lines[5]) < 320
    assert lines[6:] == ["3. https://example.com/", "   https://example.com/"]
    assert result.title == "python style"


def test_default_limit_and_no_results(ctx: ToolContext, call: Call) -> None:
    with http_server({"/search": searxng}) as server:
        tool = WebSearch(server.base)
        output = call(tool, ctx, query="many").output
        assert output.count("https://") == 5 and output.splitlines()[-3:] == [
            "5. r4",
            "   https://r4.example/",
            "   s",
        ]
        assert call(tool, ctx, query="nothing").output == "No results for 'nothing'."


def test_backend_errors(ctx: ToolContext, call: Call) -> None:
    routes = {"/search": Reply(403, b"Forbidden"), "/bad/search": Reply(body=b"<html>")}
    with http_server(routes) as server:
        with pytest.raises(ToolError, match="enable `json`"):
            call(WebSearch(server.base), ctx, query="x")
        with pytest.raises(ToolError, match="did not answer JSON"):
            call(WebSearch(server.base + "/bad"), ctx, query="x")
        with pytest.raises(ToolError, match="HTTP 404"):
            call(WebSearch(server.base + "/none"), ctx, query="x")
        url = server.base
    with pytest.raises(ToolError, match="could not be reached"):
        call(WebSearch(url), ctx, query="x")


def test_permission_is_asked_with_the_query(make_ctx: MakeContext, call: Call) -> None:
    with http_server({"/search": searxng}) as server:
        with pytest.raises(PermissionDenied):
            call(WebSearch(server.base), make_ctx(mode="headless"), query="x")
        allowed = make_ctx(mode="headless", rules=[Rule("websearch", "*", "allow")])
        assert call(WebSearch(server.base), allowed, query="x").output.startswith("1. ")
        assert len(server.requests) == 1
