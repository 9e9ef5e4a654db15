"""Local stand-ins for the web APIs of the integrations, each answering with the provider's
documented shape, on a real HTTP server (tests.support.local_http):

    slack_server(token)     the Slack Web API: chat.postMessage, conversations.history and
                            .replies under /api/, a bot token checked, messages kept; a
                            `rate_limit` list of Retry-After values answers 429 first
    search_server()         SearXNG (/search), Brave (/res/v1/web/search), Tavily (/search
                            POSTed), each checking its key header
    image_server(key)       /v1/images/generations answering a real PNG as b64_json
    png(width, height)      a real PNG, made with zlib
"""

from __future__ import annotations

import base64
import contextlib
import json
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from tests.support.local_http import JSON, Recorded, Reply, Server, serving

__all__ = ["SEARCH_RESULTS", "SlackWorld", "image_server", "png", "search_server",
           "slack_server"]

SEARCH_RESULTS = [
    {"title": "Python  docs", "url": "https://docs.python.org/", "text": "The\n official docs."},
    {"title": "PEP 8", "url": "https://peps.python.org/pep-0008/", "text": "Style " * 100},
    *({"title": f"r{n}", "url": f"https://r{n}.example/", "text": "s"} for n in range(20)),
]


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps(data).encode(), {**JSON, **(headers or {})})


@dataclass
class SlackWorld:
    """What the Slack stand-in holds: messages by channel, and the 429s still to give."""

    token: str
    messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    rate_limit: list[str] = field(default_factory=list)
    clock: int = 1_700_000_000

    def respond(self, seen: Recorded) -> Reply:
        if self.rate_limit:
            return _json({"ok": False, "error": "ratelimited"}, 429,
                         {"Retry-After": self.rate_limit.pop(0)})
        if seen.headers.get("authorization") != f"Bearer {self.token}":
            return _json({"ok": False, "error": "invalid_auth"})
        method = seen.path.removeprefix("/api/")
        if method == "chat.postMessage" and seen.method == "POST":
            return self._post(json.loads(seen.body))
        args = {k: v[0] for k, v in seen.query.items()}  # GET, or a form POST
        args.update({k: v[0] for k, v in parse_qs(seen.body.decode()).items()})
        if method == "conversations.history":
            return self._history(args)
        if method == "conversations.replies":
            return self._replies(args)
        return _json({"ok": False, "error": "unknown_method"}, 404)

    def _post(self, body: dict[str, Any]) -> Reply:
        channel = body.get("channel")
        if channel not in self.messages:
            return _json({"ok": False, "error": "channel_not_found"})
        if not body.get("text"):
            return _json({"ok": False, "error": "no_text"})
        self.clock += 1
        message = {"type": "message", "user": "U0BOT", "text": body["text"],
                   "ts": f"{self.clock}.000100"}
        thread = body.get("thread_ts")
        if thread:
            parent = next((m for m in self.messages[channel] if m["ts"] == thread), None)
            if parent is None:
                return _json({"ok": False, "error": "thread_not_found"})
            message["thread_ts"] = thread
            parent["reply_count"] = parent.get("reply_count", 0) + 1
        self.messages[channel].append(message)
        return _json({"ok": True, "channel": channel, "ts": message["ts"], "message": message})

    def _history(self, args: dict[str, str]) -> Reply:
        channel = args.get("channel", "")
        if channel not in self.messages:
            return _json({"ok": False, "error": "channel_not_found"})
        top = [m for m in self.messages[channel] if "thread_ts" not in m]
        limit = int(args.get("limit", "100"))
        newest = list(reversed(top))
        return _json({"ok": True, "messages": newest[:limit], "has_more": len(newest) > limit})

    def _replies(self, args: dict[str, str]) -> Reply:
        channel, ts = args.get("channel", ""), args.get("ts", "")
        found = [m for m in self.messages.get(channel, [])
                 if m["ts"] == ts or m.get("thread_ts") == ts]
        if not found:
            return _json({"ok": False, "error": "thread_not_found"})
        return _json({"ok": True, "messages": found, "has_more": False})


@contextlib.contextmanager
def slack_server(token: str, *, channels: tuple[str, ...] = ("C0GENERAL",)
                 ) -> Iterator[tuple[Server, SlackWorld]]:
    """The Slack stand-in; its Web API base URL is `server.url + "/api"`."""
    world = SlackWorld(token, {channel: [] for channel in channels})
    with serving(world.respond) as server:
        yield server, world


def _search(seen: Recorded, key: str) -> Reply:
    if seen.path == "/search" and seen.method == "GET":  # SearXNG
        if seen.query.get("format") != ["json"]:
            return Reply(403, b"Forbidden")
        found = [{"title": r["title"], "url": r["url"], "content": r["text"],
                  "engine": "duckduckgo", "score": 1.0} for r in SEARCH_RESULTS]
        return _json({"query": seen.query["q"][0], "number_of_results": len(found),
                      "results": found})
    if seen.path == "/res/v1/web/search":  # Brave
        if seen.headers.get("x-subscription-token") != key:
            return _json({"type": "ErrorResponse", "error": {"code": "SUBSCRIPTION_TOKEN_INVALID",
                          "status": 422, "detail": "The provided subscription token is invalid."}},
                         401)
        count = int(seen.query.get("count", ["20"])[0])
        found = [{"type": "search_result", "title": r["title"].replace("PEP", "<strong>PEP"
                                                                        "</strong>"),
                  "url": r["url"], "description": r["text"], "language": "en"}
                 for r in SEARCH_RESULTS[:count]]
        return _json({"type": "search", "query": {"original": seen.query["q"][0]},
                      "web": {"type": "search", "results": found}})
    if seen.path == "/search" and seen.method == "POST":  # Tavily
        if seen.headers.get("authorization") != f"Bearer {key}":
            return _json({"detail": {"error": "Unauthorized: missing or invalid API key."}}, 401)
        body = json.loads(seen.body)
        found = [{"title": r["title"], "url": r["url"], "content": r["text"], "score": 0.9,
                  "raw_content": None} for r in SEARCH_RESULTS[: body.get("max_results", 5)]]
        return _json({"query": body["query"], "answer": None, "images": [],
                      "results": found, "response_time": 0.5})
    return Reply(404, b"not here")


@contextlib.contextmanager
def search_server(key: str) -> Iterator[Server]:
    """SearXNG at `url`, Brave at `url/res/v1/web/search`, Tavily at `url/search` (POST)."""
    with serving(lambda seen: _search(seen, key)) as server:
        yield server


def png(width: int = 4, height: int = 3) -> bytes:
    """A real RGB PNG of `width` x `height`, a gradient."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + bytes(v for x in range(width)
                                    for v in (x * 40 % 256, y * 60 % 256, 128))
                    for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


def _image(seen: Recorded, key: str) -> Reply:
    if seen.path != "/v1/images/generations" or seen.method != "POST":
        return _json({"error": {"message": "not found"}}, 404)
    if seen.headers.get("authorization") != f"Bearer {key}":
        return _json({"error": {"message": "Incorrect API key provided.",
                                "type": "invalid_request_error", "code": "invalid_api_key"}}, 401)
    body = json.loads(seen.body)
    if not body.get("prompt"):
        return _json({"error": {"message": "prompt is required"}}, 400)
    width, height = (int(n) for n in str(body.get("size", "4x3")).split("x"))
    data = base64.b64encode(png(width, height)).decode()
    return _json({"created": 1_700_000_000, "data": [{"b64_json": data,
                                                      "revised_prompt": body["prompt"]}]})


@contextlib.contextmanager
def image_server(key: str) -> Iterator[Server]:
    """An OpenAI-compatible images endpoint at `url/v1/images/generations`."""
    with serving(lambda seen: _image(seen, key)) as server:
        yield server
