"""The websearch tool's three backends, each against a local stand-in that answers in the
provider's documented shape and checks the key where the provider takes it."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.support.integration_servers import search_server
from tests.support.tool_calls import Call
from totem.settings.integrations import SearchBackend, SearchSettings
from totem.settings.secret import Secret
from totem.tools.base import ToolContext, ToolError, ToolSettings
from totem.tools.websearch import SNIPPET, WebSearch

KEY = "BSA-test-key-0123456789"


def backend(kind: SearchBackend, url: str, key: str | None = KEY) -> WebSearch:
    path = {"searxng": "", "brave": "/res/v1/web/search", "tavily": "/search"}[kind]
    return WebSearch(SearchSettings(kind, url + path, Secret(key) if key else None))


@pytest.mark.parametrize("kind", ["searxng", "brave", "tavily"])
def test_each_backend_gives_the_same_compact_list(kind: SearchBackend, ctx: ToolContext,
                                                  call: Call) -> None:
    with search_server(KEY) as server:
        output = call(backend(kind, server.url, None if kind == "searxng" else KEY), ctx,
                      query="python style", limit=3).output
        seen = server.requests[-1]
    lines = output.splitlines()
    assert lines[:5] == ["1. Python docs", "   https://docs.python.org/", "   The official docs.",
                         "2. PEP 8", "   https://peps.python.org/pep-0008/"]
    assert lines[5].startswith("   Style Style") and len(lines[5]) <= SNIPPET + 10
    assert lines[6:] == ["3. r0", "   https://r0.example/", "   s"]
    if kind == "searxng":
        assert (seen.method, seen.query) == ("GET", {"q": ["python style"], "format": ["json"]})
    elif kind == "brave":  # GET with the query and count; the key in X-Subscription-Token
        assert (seen.method, seen.query) == ("GET", {"q": ["python style"], "count": ["3"]})
        assert seen.headers["x-subscription-token"] == KEY
    else:  # POST JSON; the key as a bearer token
        assert seen.method == "POST" and json.loads(seen.body) == {"query": "python style",
                                                                   "max_results": 3}
        assert seen.headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("kind", ["brave", "tavily"])
def test_a_wrong_key_is_said_and_not_shown(kind: SearchBackend, ctx: ToolContext,
                                           call: Call) -> None:
    with search_server(KEY) as server, pytest.raises(ToolError) as refused:
        call(backend(kind, server.url, "wrong-key-123456789"), ctx, query="x")
    assert "refused the key (HTTP 401); check tools.websearch.key" in str(refused.value)
    assert "wrong-key" not in str(refused.value)


def test_the_list_has_a_size_limit(ctx: ToolContext, call: Call) -> None:
    with search_server(KEY) as server:
        many = call(backend("tavily", server.url), ctx, query="x", limit=20).output
        assert many.count("\n   https://") == 20
        assert len(many) < 8_000
        small = dataclasses.replace(ctx, settings=ToolSettings(output_limit=300))
        cut = call(backend("brave", server.url), small, query="x", limit=20).output
    assert len(cut) < 400 and "characters truncated" in cut
    with pytest.raises(ToolError, match="less than or equal to 20"):
        call(backend("brave", "http://127.0.0.1:9"), ctx, query="x", limit=21)
