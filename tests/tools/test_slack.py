"""The slack tool against a local stand-in of the Slack Web API, with the official slack_sdk
as the oracle for what a request looks like."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from tests.support.integration_servers import slack_server
from tests.support.local_http import Recorded
from tests.support.tool_calls import Call, MakeContext, answering
from totem.policy.permission import PermissionDenied, Rule
from totem.settings.integrations import SlackSettings
from totem.settings.secret import Secret
from totem.tools.base import ToolContext, ToolError
from totem.tools.slack import Slack

TOKEN = "xoxb-1111-2222-abcdefghijklmnop"


def tool(url: str, token: str = TOKEN) -> Slack:
    return Slack(SlackSettings(Secret(token), url + "/api"))


def shape(seen: Recorded) -> tuple[Any, ...]:
    """What matters of a request: verb, method, content type, token, arguments."""
    kind = seen.headers.get("content-type", "").replace(" ", "").lower()
    if kind.startswith("application/json"):
        arguments = json.loads(seen.body)
    else:
        arguments = {k: v[0] for k, v in parse_qs(seen.body.decode()).items()}
    return (seen.method, seen.path, kind, seen.headers.get("authorization"),
            {k: str(v) for k, v in arguments.items()})


def test_requests_are_shaped_as_slack_sdk_shapes_them(ctx: ToolContext, call: Call) -> None:
    with slack_server(TOKEN) as (server, world):
        sdk = WebClient(token=TOKEN, base_url=server.url + "/api/")
        first = sdk.chat_postMessage(channel="C0GENERAL", text="hello from the sdk")
        sdk.chat_postMessage(channel="C0GENERAL", text="in thread", thread_ts=first["ts"])
        sdk.conversations_history(channel="C0GENERAL", limit=20)
        sdk.conversations_replies(channel="C0GENERAL", ts=first["ts"], limit=20)
        oracle = [shape(r) for r in server.requests]
        server.requests.clear()
        slack = tool(server.url)
        posted = call(slack, ctx, action="post", channel="C0GENERAL", text="hello from totem")
        ts = posted.output.split("ts ")[1].rstrip(").")
        call(slack, ctx, action="reply", channel="C0GENERAL", thread_ts=ts, text="in thread")
        call(slack, ctx, action="history", channel="C0GENERAL")
        call(slack, ctx, action="replies", channel="C0GENERAL", thread_ts=ts)
        ours = [shape(r) for r in server.requests]
    for sdk_request, our_request in zip(oracle, ours, strict=True):
        assert sdk_request[:4] == our_request[:4]
        assert set(sdk_request[4]) == set(our_request[4])
    assert ours[0][4] == {"channel": "C0GENERAL", "text": "hello from totem"}
    assert ours[1][4] == {"channel": "C0GENERAL", "text": "in thread", "thread_ts": ts}
    assert len(world.messages["C0GENERAL"]) == 4


def test_post_reply_and_read_back(ctx: ToolContext, call: Call) -> None:
    with slack_server(TOKEN) as (server, _world):
        slack = tool(server.url)
        posted = call(slack, ctx, action="post", channel="C0GENERAL", text="Build is green")
        assert posted.output.startswith("Posted to C0GENERAL (ts 17000")
        ts = posted.output.split("ts ")[1].rstrip(").")
        call(slack, ctx, action="post", channel="C0GENERAL", text="second   message\nhere")
        reply = call(slack, ctx, action="reply", channel="C0GENERAL", thread_ts=ts,
                     text="thanks")
        assert reply.output.startswith(f"Posted to thread {ts} of C0GENERAL")
        history = call(slack, ctx, action="history", channel="C0GENERAL").output.splitlines()
        assert history[0] == f"{ts} U0BOT: Build is green [1 replies, thread_ts {ts}]"
        assert history[1].endswith("U0BOT: second message here")
        assert len(history) == 2
        thread = call(slack, ctx, action="replies", channel="C0GENERAL", thread_ts=ts).output
        assert thread.splitlines()[1].endswith("U0BOT: thanks")
        one = call(slack, ctx, action="history", channel="C0GENERAL", limit=1).output
        assert one.splitlines()[-1] == "(older messages not shown)"


def test_slack_refusals_are_clear_tool_errors(ctx: ToolContext, call: Call) -> None:
    with slack_server(TOKEN) as (server, _world):
        with pytest.raises(ToolError, match="Slack refused chat.postMessage: channel_not_found"
                                            " — the channel does not exist"):
            call(tool(server.url), ctx, action="post", channel="C0NOPE", text="hi")
        with pytest.raises(ToolError, match="invalid_auth — the token is not valid"):
            call(tool(server.url, "xoxb-wrong-token-0000"), ctx, action="history",
                 channel="C0GENERAL")
        with pytest.raises(ToolError, match="thread_not_found"):
            call(tool(server.url), ctx, action="replies", channel="C0GENERAL",
                 thread_ts="1.2")
        with pytest.raises(ToolError, match="post needs a text"):
            call(tool(server.url), ctx, action="post", channel="C0GENERAL", text=" ")
        with pytest.raises(ToolError, match="needs the thread's ts"):
            call(tool(server.url), ctx, action="reply", channel="C0GENERAL", text="x")
        assert len(server.requests) == 3  # bad arguments never reach Slack
        # the oracle agrees that these are refusals
        with pytest.raises(SlackApiError, match="channel_not_found"):
            WebClient(token=TOKEN, base_url=server.url + "/api/").chat_postMessage(
                channel="C0NOPE", text="hi")


def test_a_429_waits_retry_after_through_the_retry_policy(ctx: ToolContext, call: Call) -> None:
    with slack_server(TOKEN) as (server, world):
        world.rate_limit = ["1"]
        result = call(tool(server.url), ctx, action="post", channel="C0GENERAL", text="hi")
        assert result.output.startswith("Posted to C0GENERAL")
        assert len(server.requests) == 2 and len(world.messages["C0GENERAL"]) == 1
        world.rate_limit = ["3600"]  # longer than a person waits on a tool: said, not waited
        with pytest.raises(ToolError, match="HTTP 429.*asks to wait 3600 s"):
            call(tool(server.url), ctx, action="post", channel="C0GENERAL", text="again")
        assert len(server.requests) == 3


def test_the_token_never_shows(ctx: ToolContext, call: Call) -> None:
    with slack_server(TOKEN, channels=("C0GENERAL",)) as (server, world):
        call(tool(server.url), ctx, action="post", channel="C0GENERAL",
             text=f"leaked {TOKEN} here")
        output = call(tool(server.url), ctx, action="history", channel="C0GENERAL").output
        assert TOKEN not in output and "leaked [redacted] here" in output
        assert world.messages["C0GENERAL"][0]["text"] == f"leaked {TOKEN} here"
    assert TOKEN not in repr(SlackSettings(Secret(TOKEN)))


def test_a_missing_token_variable_is_said(ctx: ToolContext, call: Call) -> None:
    missing = Slack(SlackSettings(Secret("${env:TOTEM_TEST_NO_SUCH_SLACK_TOKEN}")))
    with pytest.raises(ToolError, match=r"\$TOTEM_TEST_NO_SUCH_SLACK_TOKEN \(not set\)"):
        call(missing, ctx, action="history", channel="C0GENERAL")


def test_every_call_asks(make_ctx: MakeContext, call: Call) -> None:
    with slack_server(TOKEN) as (server, world):
        with pytest.raises(PermissionDenied):
            call(tool(server.url), make_ctx(mode="headless"), action="post",
                 channel="C0GENERAL", text="hi")
        reads_only = make_ctx(mode="headless", rules=[Rule("slack", "read *", "allow")])
        call(tool(server.url), reads_only, action="history", channel="C0GENERAL")
        with pytest.raises(PermissionDenied):
            call(tool(server.url), reads_only, action="post", channel="C0GENERAL", text="hi")
        person = make_ctx(mode="interactive")
        asked = answering(person, "reject")
        with pytest.raises(PermissionDenied):
            call(tool(server.url), person, action="post", channel="C0GENERAL", text="Deploy!")
        assert asked[0].permission == "slack" and asked[0].patterns == ["post C0GENERAL"]
        assert asked[0].title == "post to Slack C0GENERAL: Deploy!"
        assert world.messages["C0GENERAL"] == [] and len(server.requests) == 1
