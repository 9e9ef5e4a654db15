from __future__ import annotations

import asyncio
import time

import pytest

from tests.support.local_http import Reply, http_server
from tests.support.tool_calls import Call, MakeContext, answering
from totem.abort import Aborted
from totem.policy.permission import PermissionDenied, Rule
from totem.tools.base import ToolContext, ToolError
from totem.tools.fetch import MAX_BYTES, Fetch, FetchInput

HTML = "text/html; charset=utf-8"
PAGE = b"""<!doctype html>
<html><head><title>Guide</title><style>body { color: red }</style>
<script>var secret = "do not show";</script></head>
<body><h1>Install</h1><p>Read the <a href="/docs/api">API page</a> first.</p>
<h2>Usage</h2><pre><code>def hello():
    return 1
</code></pre><ul><li>one</li><li>two</li></ul></body></html>"""


def test_html_page_becomes_markdown(ctx: ToolContext, call: Call) -> None:
    with http_server({"/page": Reply(body=PAGE, headers={"Content-Type": HTML})}) as server:
        result = call(Fetch(), ctx, url=server.base + "/page")
    text = result.output
    assert text.startswith("Title: Guide\n")
    assert "# Install" in text and "## Usage" in text
    assert f"[API page]({server.base}/docs/api)" in text
    assert "```\ndef hello():\n    return 1\n```" in text
    assert "- one\n- two" in text
    assert "secret" not in text and "color: red" not in text
    assert result.title == server.base + "/page"


def test_html_as_text_and_as_html(ctx: ToolContext, call: Call) -> None:
    with http_server({"/page": Reply(body=PAGE, headers={"Content-Type": HTML})}) as server:
        text = call(Fetch(), ctx, url=server.base + "/page", format="text").output
        html = call(Fetch(), ctx, url=server.base + "/page", format="html").output
    assert "Install" in text and "API page" in text and "<h1>" not in text and "#" not in text
    assert "secret" not in text
    assert html == PAGE.decode().strip()


def test_text_and_json_are_returned_as_they_are(ctx: ToolContext, call: Call) -> None:
    routes = {
        "/a.txt": Reply(
            body=b"# not converted\n<b>raw</b>\n", headers={"Content-Type": "text/plain"}
        ),
        "/a.json": Reply(body=b'{"a": [1, 2]}', headers={"Content-Type": "application/json"}),
    }
    with http_server(routes) as server:
        assert (
            call(Fetch(), ctx, url=server.base + "/a.txt").output == "# not converted\n<b>raw</b>"
        )
        assert call(Fetch(), ctx, url=server.base + "/a.json").output == '{"a": [1, 2]}'


def test_follows_redirects(ctx: ToolContext, call: Call) -> None:
    routes = {
        "/old": Reply(301, headers={"Location": "/middle"}),
        "/middle": Reply(302, headers={"Location": "new"}),
        "/new": Reply(body=b"arrived", headers={"Content-Type": "text/plain"}),
    }
    with http_server(routes) as server:
        result = call(Fetch(), ctx, url=server.base + "/old")
        assert server.requests == ["/old", "/middle", "/new"]
    assert result.output == f"[Redirected to {server.base}/new]\narrived"
    assert result.title == server.base + "/new"


def test_too_many_redirects(ctx: ToolContext, call: Call) -> None:
    with http_server({"/loop": Reply(302, headers={"Location": "/loop"})}) as server:
        with pytest.raises(ToolError, match="more than 5 redirects"):
            call(Fetch(), ctx, url=server.base + "/loop")
        assert len(server.requests) == 6


def test_large_body_is_cut_and_truncated(ctx: ToolContext, call: Call) -> None:
    line = b"0123456789" * 9 + b"\n"
    body = line * (MAX_BYTES // len(line) + 10_000)
    with http_server({"/big": Reply(body=body, headers={"Content-Type": "text/plain"})}) as server:
        result = call(Fetch(), ctx, url=server.base + "/big", max_chars=2000)
    assert result.output.startswith("[The body was cut at 5 MB.]\n0123456789")
    assert "characters truncated" in result.output
    assert len(result.output) < 2300


def test_binary_content_is_refused(ctx: ToolContext, call: Call) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(100)
    routes = {
        "/a.png": Reply(body=png, headers={"Content-Type": "image/png"}),
        "/blob": Reply(body=b"\x00\x01\x02" * 10),
    }
    with http_server(routes) as server:
        with pytest.raises(ToolError, match=r"binary content \(image/png, 108 bytes\)"):
            call(Fetch(), ctx, url=server.base + "/a.png")
        with pytest.raises(ToolError, match="binary content"):
            call(Fetch(), ctx, url=server.base + "/blob")


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "data:,hi"])
def test_other_schemes_are_refused(ctx: ToolContext, call: Call, url: str) -> None:
    with pytest.raises(ToolError, match="only reads http:// and https:// URLs"):
        call(Fetch(), ctx, url=url)


def test_not_a_url(ctx: ToolContext, call: Call) -> None:
    with pytest.raises(ToolError, match="no scheme"):
        call(Fetch(), ctx, url="example.com/page")


def test_redirect_to_file_is_refused(ctx: ToolContext, call: Call) -> None:
    with http_server({"/go": Reply(302, headers={"Location": "file:///etc/passwd"})}) as server:
        with pytest.raises(ToolError, match="redirect to 'file:///etc/passwd' has 'file:'"):
            call(Fetch(), ctx, url=server.base + "/go")


def test_http_error_status(ctx: ToolContext, call: Call) -> None:
    with http_server({}) as server:
        with pytest.raises(ToolError, match="HTTP 404"):
            call(Fetch(), ctx, url=server.base + "/missing")


def test_connection_refused(ctx: ToolContext, call: Call) -> None:
    with http_server({}) as server:
        url = server.base + "/"
    with pytest.raises(ToolError, match="Could not fetch"):
        call(Fetch(), ctx, url=url)


def test_permission_is_asked_with_the_host(make_ctx: MakeContext, call: Call) -> None:
    ctx = make_ctx()
    asked = answering(ctx, "once")
    with http_server({"/": Reply(body=b"ok", headers={"Content-Type": "text/plain"})}) as server:
        assert call(Fetch(), ctx, url=server.base + "/").output == "ok"
    assert [(a.permission, a.patterns) for a in asked] == [("fetch", ["127.0.0.1"])]
    assert asked[0].title == f"fetch {server.base}/"


def test_rules_allow_hosts(make_ctx: MakeContext, call: Call) -> None:
    allowed = make_ctx(mode="headless", rules=[Rule("fetch", "127.0.0.1", "allow")])
    denied = make_ctx(mode="headless")
    routes = {
        "/": Reply(body=b"ok", headers={"Content-Type": "text/plain"}),
        "/away": Reply(302, headers={"Location": "http://localhost:1/"}),
    }
    with http_server(routes) as server:
        assert call(Fetch(), allowed, url=server.base + "/").output == "ok"
        with pytest.raises(PermissionDenied):
            call(Fetch(), denied, url=server.base + "/")
        # A redirect to another host is asked for like the first one.
        with pytest.raises(PermissionDenied, match="fetch http://localhost:1/"):
            call(Fetch(), allowed, url=server.base + "/away")
        assert server.requests == ["/", "/away"]


def test_abort_stops_a_slow_fetch(ctx: ToolContext) -> None:
    ctx.tool_name = "fetch"

    async def scenario(url: str) -> float:
        args = FetchInput.model_validate({"url": url})
        task = asyncio.create_task(Fetch().run(args, ctx))
        await asyncio.sleep(0.2)
        started = time.monotonic()
        ctx.abort.abort()
        with pytest.raises(Aborted):
            await task
        return time.monotonic() - started

    slow = Reply(body=b"late", headers={"Content-Type": "text/plain"}, delay=3)
    with http_server({"/slow": slow}) as server:
        assert asyncio.run(scenario(server.base + "/slow")) < 1
