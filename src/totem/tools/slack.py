"""slack: post to, reply in and read a Slack channel through the Web API; absent until a
bot token is configured (`integrations.slack.token`).

Every call asks first (`slack` permission; pattern `post CHANNEL` or `read CHANNEL`): a post
speaks for the person, a read sends the channel's messages to the model.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from totem.policy.redact import Redactor
from totem.settings.integrations import SlackSettings
from totem.tools.base import ToolContext, ToolError, ToolResult, truncate
from totem.tools.slack_api import SlackClient, SlackRefused

__all__ = ["Slack", "SlackInput"]

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MESSAGE_CHARS = 500  # characters kept of each message read


class SlackInput(BaseModel):
    action: Literal["post", "reply", "history", "replies"] = Field(
        description="post, reply (in a thread), history (recent messages), replies (a thread).")
    channel: str = Field(description="Channel ID (C0123ABCD) or #name.")
    text: str | None = Field(None, description="The message (post, reply).")
    thread_ts: str | None = Field(None, description="The thread's ts (reply, replies).")
    limit: int | None = Field(None, ge=1, le=MAX_LIMIT, description="Messages read (default 20).")


class Slack:
    name: ClassVar[str] = "slack"
    kind: ClassVar[str] = "integration"
    description: ClassVar[str] = (Path(__file__).with_name("slack.txt")
                                  .read_text(encoding="utf-8").strip())
    read_only: ClassVar[bool] = False
    Input: ClassVar[type[BaseModel]] = SlackInput

    def __init__(self, settings: SlackSettings) -> None:
        self.settings = settings

    async def run(self, args: SlackInput, ctx: ToolContext) -> ToolResult:
        channel = args.channel.strip()
        if not channel:
            raise ToolError("The channel is empty: give a channel ID such as C0123ABCD.")
        writes = args.action in ("post", "reply")
        text = (args.text or "").strip()
        if writes and not text:
            raise ToolError(f"{args.action} needs a text.")
        if args.action in ("reply", "replies") and not (args.thread_ts or "").strip():
            raise ToolError(f"{args.action} needs the thread's ts (thread_ts).")
        title = _title(args, channel, text)
        await ctx.ask("slack", [f"{'post' if writes else 'read'} {channel}"], title=title)
        ctx.abort.check()
        token = self.settings.token.reveal()
        if not token:
            raise ToolError(f"The Slack token is not available: integrations.slack.token is "
                            f"{self.settings.token.source()}.")
        redact = Redactor([token])
        client = SlackClient(self.settings.base_url, token, abort=ctx.abort)
        try:
            output = await _perform(client, args, channel, text)
        except SlackRefused as exc:
            raise ToolError(redact(str(exc))) from None
        return ToolResult(truncate(redact(output), ctx.settings.output_limit), title=title)


def _title(args: SlackInput, channel: str, text: str) -> str:
    short = text if len(text) <= 80 else text[:77] + "..."
    match args.action:
        case "post":
            return f"post to Slack {channel}: {short}"
        case "reply":
            return f"reply in Slack thread {args.thread_ts} of {channel}: {short}"
        case "history":
            return f"read Slack {channel}'s recent messages"
        case "replies":
            return f"read Slack thread {args.thread_ts} of {channel}"


async def _perform(client: SlackClient, args: SlackInput, channel: str, text: str) -> str:
    limit = args.limit or DEFAULT_LIMIT
    thread = (args.thread_ts or "").strip()
    match args.action:
        case "post" | "reply":
            body: dict[str, Any] = {"channel": channel, "text": text}
            if args.action == "reply":
                body["thread_ts"] = thread
            sent = await client.call("chat.postMessage", body, json=True)
            where = f"thread {thread} of " if thread and args.action == "reply" else ""
            return f"Posted to {where}{sent.get('channel', channel)} (ts {sent.get('ts', '?')})."
        case "history":
            found = await client.call("conversations.history",
                                      {"channel": channel, "limit": limit}, json=False)
            return _listing(found, channel, newest_first=True)
        case "replies":
            found = await client.call("conversations.replies",
                                      {"channel": channel, "ts": thread, "limit": limit},
                                      json=False)
            return _listing(found, channel, newest_first=False)


def _listing(found: dict[str, Any], channel: str, *, newest_first: bool) -> str:
    """The messages oldest first, one line each: ts, author, text (and its replies)."""
    messages = [m for m in found.get("messages") or [] if isinstance(m, dict)]
    if newest_first:  # conversations.history gives the newest first
        messages.reverse()
    if not messages:
        return f"No messages in {channel}."
    lines = [_line(m) for m in messages]
    if found.get("has_more"):
        lines.append("(older messages not shown)" if newest_first else "(more replies)")
    return "\n".join(lines)


def _line(message: dict[str, Any]) -> str:
    who = message.get("user") or message.get("username") or message.get("bot_id") or "?"
    text = re.sub(r"\s+", " ", str(message.get("text") or "")).strip()
    if len(text) > MESSAGE_CHARS:
        text = text[:MESSAGE_CHARS] + "..."
    count = message.get("reply_count")
    replies = f" [{count} replies, thread_ts {message.get('ts')}]" if count else ""
    return f"{message.get('ts', '?')} {who}: {text}{replies}"
