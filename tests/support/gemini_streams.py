"""The Gemini side shared by test_gemini_aimock.py and test_gemini_sdk.py: the model and key,
aimock's fixtures, a request and a run of GeminiProvider, and the real wire shapes a local
server streams (signed thoughts and calls, a plain answer, the paged model list).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from tests.support import streams
from tests.support.aimock import fixture
from tests.support.local_http import Recorded, Reply, Tap
from tests.support.streams import stream_events
from totem.messages import Message
from totem.providers.base import ModelRequest, RetryableError, StreamEvent, ToolSpec
from totem.providers.gemini import GeminiProvider

MODEL = "gemini-2.5-flash"
KEY = "AIza-test-SECRET-42"
WEATHER = ToolSpec("get_weather", "Weather of a city.", {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
    "additionalProperties": False})


FIXTURES = [
    fixture("say hello", {"content": "Hello from aimock, streamed in small chunks.",
                          "usage": {"promptTokenCount": 12, "candidatesTokenCount": 7}},
            chunkSize=8),
    fixture("one call", {"toolCalls": [{"name": "get_weather",
                                        "arguments": '{"city": "Paris", "days": 3}'}]}),
    fixture("weather", {"content": "Sunny in Paris, 21:00 in Tokyo."},
            match={"hasToolResult": True}),
    fixture("weather", {"toolCalls": [
        {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"name": "get_time", "arguments": '{"tz": "Asia/Tokyo"}'}]}),
    fixture("ponder", {"reasoning": "The user wants me to think first.", "content": "Done."}),
    fixture("too long", {"content": "This answer was cut", "finishReason": "length"}),
    fixture("limited", {"error": {"message": "Quota exceeded", "type": "RESOURCE_EXHAUSTED"},
                        "status": 429, "retryAfter": 0}, 0),
    fixture("limited", {"content": "after the limit"}, 1),
    fixture("garbled", {"content": "never parsed"}, chaos={"malformedRate": 1}),
    {"match": {}, "response": {"content": "catch-all"}},
]


def ask(text: str, *, history: Sequence[Message] = (), **kw: Any) -> ModelRequest:
    """`text` from the user, then the `history` that followed it."""
    return streams.ask(text, model=kw.pop("model", MODEL), after=history, **kw)


def run(
    base_url: str,
    request: ModelRequest,
    *,
    key: str | None = KEY,
    tries: int = 1,
    tap: Tap | None = None,
) -> tuple[list[StreamEvent], list[RetryableError]]:
    return stream_events(lambda: GeminiProvider("gem", base_url, api_key=key, transport=tap),
                         request, tries=tries)


SIG_THOUGHT = base64.b64encode(b"signature of the thought").decode()
SIG_TEXT = base64.b64encode(b"signature of the text").decode()
SIG_CALL = base64.b64encode(b"signature of the first call").decode()

SIGNED_STREAM: list[dict[str, Any]] = [
    {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "I should read the file.", "thought": True}]}, "index": 0}]},
    {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "", "thought": True, "thoughtSignature": SIG_THOUGHT}]}, "index": 0}]},
    {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "Reading it.", "thoughtSignature": SIG_TEXT}]}, "index": 0}]},
    {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
         "thoughtSignature": SIG_CALL},
        {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}]},
        "finishReason": "STOP", "index": 0}],
     "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 20,
                       "thoughtsTokenCount": 40, "totalTokenCount": 110,
                       "cachedContentTokenCount": 32}},
]
ANSWER: list[dict[str, Any]] = [{"candidates": [{
    "content": {"role": "model", "parts": [{"text": "Both sunny."}]},
    "finishReason": "STOP", "index": 0}]}]


PAGES = {
    "": ({"models": [
        {"name": "models/gemini-2.5-flash", "displayName": "Gemini 2.5 Flash",
         "inputTokenLimit": 1048576, "outputTokenLimit": 65536, "thinking": True,
         "supportedGenerationMethods": ["generateContent", "countTokens"]},
        {"name": "models/text-embedding-004", "inputTokenLimit": 2048,
         "supportedGenerationMethods": ["embedContent"]}]}, "page-2"),
    "page-2": ({"models": [
        {"name": "models/gemini-2.0-flash", "displayName": "Gemini 2.0 Flash",
         "inputTokenLimit": 1048576, "outputTokenLimit": 8192,
         "supportedGenerationMethods": ["generateContent"]}]}, "page-3"),
    "page-3": ({"models": [
        {"name": "models/gemma-3-27b-it", "inputTokenLimit": 131072, "outputTokenLimit": 8192,
         "supportedGenerationMethods": ["generateContent"]}]}, None),
}


def model_pages(seen: Recorded) -> Reply:
    token = seen.query.get("pageToken", [""])[0]
    page, next_token = PAGES[token]
    return Reply(200, json.dumps({**page, **({"nextPageToken": next_token}
                                              if next_token else {})}).encode())
