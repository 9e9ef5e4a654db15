"""The official `google-genai` SDK as a validator of what the Gemini adapter believes.

- the SDK reads the same SSE bytes (a local server with the real shape, and aimock) and
  finds the same text, thoughts, signatures, calls, usage and finish reason as we do;
- every content, tool and system instruction we build validates as the SDK's own types
  (which forbid unknown fields), and the body the SDK sends for them equals ours;
- the SDK pages through the model list with the same query parameters as we do.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest

from tests.support.aimock import Aimock, aimock_fixture
from tests.support.gemini_streams import (
    ANSWER,
    FIXTURES,
    KEY,
    MODEL,
    SIGNED_STREAM,
    WEATHER,
    ask,
    model_pages,
    run,
)
from tests.support.local_http import scripted_server, sse
from totem.messages import ImageBlock, Message, ReasoningPart, TextPart, ToolPart
from totem.providers.base import (
    ModelRequest,
    ReasoningChunk,
    StreamEnd,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
    ToolSpec,
    UsageReport,
)
from totem.providers.gemini import GeminiProvider
from totem.providers.wire.gemini import to_wire

genai = pytest.importorskip("google.genai")
types = pytest.importorskip("google.genai.types")

aimock = aimock_fixture(FIXTURES)
STREAM_PATH = f"/v1beta/models/{MODEL}:streamGenerateContent"


def sdk_stream(url: str, **kw: Any) -> list[Any]:
    """Every chunk of `generate_content_stream(**kw)` (the client is kept open meanwhile)."""
    with genai.Client(api_key=KEY, http_options=types.HttpOptions(
            base_url=url, api_version="v1beta")) as client:
        return list(client.models.generate_content_stream(model=MODEL, **kw))


def b64(raw: bytes | None) -> str | None:
    return base64.b64encode(raw).decode() if raw is not None else None


def sdk_view(chunks: list[Any]) -> list[tuple[Any, ...]]:
    """What the SDK read, in the same terms as our events."""
    out: list[tuple[Any, ...]] = []
    for chunk in chunks:
        candidate = chunk.candidates[0]
        for part in candidate.content.parts or []:
            if part.function_call is not None:
                out.append(("call", part.function_call.name, part.function_call.args,
                            b64(part.thought_signature)))
            elif part.text is not None:
                kind = "thought" if part.thought else "text"
                out.append((kind, part.text, b64(part.thought_signature)))
        if candidate.finish_reason is not None:
            out.append(("finish", candidate.finish_reason.value))
        usage = chunk.usage_metadata
        if usage is not None and usage.prompt_token_count:
            out.append(("usage", usage.prompt_token_count, usage.cached_content_token_count,
                        usage.candidates_token_count, usage.thoughts_token_count))
    return out


def our_view(base_url: str, request: ModelRequest) -> list[tuple[Any, ...]]:
    events, _ = run(base_url, request)
    out: list[tuple[Any, ...]] = []
    for event in events:
        if isinstance(event, ReasoningChunk):
            out.append(("thought", event.text, event.signature))
        elif isinstance(event, TextChunk):
            out.append(("text", event.text, event.signature))
        elif isinstance(event, ToolCallBegin):
            out.append(("call", event.name, None, event.signature))
        elif isinstance(event, ToolArgsChunk):
            name, _, signature = out[-1][1:]
            out[-1] = ("call", name, json.loads(event.text), signature)
        elif isinstance(event, UsageReport):
            u = event.usage
            out.append(("usage", u.input, u.cache_read, u.output - u.reasoning, u.reasoning))
        elif isinstance(event, StreamEnd):
            out.append(("finish", event.raw))
    return out


def same_reading(theirs: list[tuple[Any, ...]], ours: list[tuple[Any, ...]]) -> None:
    """Content in the same order; usage and finish (the SDK sees them in the chunk they came
    with, we report them at the end) as sets."""
    meta = ("usage", "finish")
    assert [i for i in theirs if i[0] not in meta] == [i for i in ours if i[0] not in meta]
    assert sorted(i for i in theirs if i[0] in meta) == sorted(i for i in ours if i[0] in meta)


def camel(value: Any) -> Any:
    """Keys in camelCase: the API reads both spellings, the SDK writes some in snake_case."""
    if isinstance(value, dict):
        return {_camel(k): camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(w.title() for w in rest)


def test_the_sdk_reads_the_signed_stream_as_we_do() -> None:
    with scripted_server({("POST", STREAM_PATH): lambda _: sse(SIGNED_STREAM)}) as server:
        theirs = sdk_view(sdk_stream(server.url, contents="weather"))
        ours = our_view(server.url, ask("weather"))
    same_reading(theirs, ours)
    assert ("call", "get_weather", {"city": "Paris"},
            base64.b64encode(b"signature of the first call").decode()) in ours


def test_the_sdk_reads_aimock_as_we_do(aimock: Aimock) -> None:
    for prompt in ("ponder", "too long", "weather"):
        if prompt == "weather":  # aimock's finish reason for calls is none of Gemini's
            with pytest.warns(UserWarning, match="FUNCTION_CALL is not a valid FinishReason"):
                theirs = sdk_view(sdk_stream(aimock.root, contents=prompt))
        else:
            theirs = sdk_view(sdk_stream(aimock.root, contents=prompt))
        ours = [i for i in our_view(aimock.root, ask(prompt)) if i[0] != "usage"]
        same_reading([i for i in theirs if i[0] != "usage"], ours)


def conversation() -> ModelRequest:
    png = ImageBlock("image/png", base64.b64encode(b"\x89PNG fake").decode())
    step = Message(id="a1", session_id="s", role="assistant", model=f"gem/{MODEL}", parts=[
        ReasoningPart("Two files.", signature=base64.b64encode(b"t").decode()),
        TextPart("Reading both.", signature=base64.b64encode(b"x").decode()),
        ToolPart("fc-1", "read", {"path": "a.py"}, state="completed", output="print(1)",
                 signature=base64.b64encode(b"c").decode()),
        ToolPart("gcall_2", "read", {"path": "b.png"}, state="completed", output="image",
                 images=[png]),
    ])
    edit = ToolSpec("edit", "Edit a file.", {
        "type": "object", "additionalProperties": False, "required": ["path"],
        "$defs": {"Range": {"type": "object", "properties": {
            "start": {"type": "integer"}, "end": {"anyOf": [{"type": "integer"},
                                                            {"type": "null"}]}}}},
        "properties": {"path": {"type": "string", "title": "Path", "description": "File"},
                       "mode": {"enum": ["a", "b"], "default": "a"},
                       "range": {"$ref": "#/$defs/Range"}}})
    return ModelRequest(
        model=MODEL, system="You are totem.", tools=[WEATHER, edit], max_tokens=800,
        temperature=0.3, options={"include_thoughts": True, "thinking_budget": 1024},
        messages=[Message(id="u1", session_id="s", role="user", parts=[TextPart("read")]),
                  step, Message(id="u2", session_id="s", role="user",
                                parts=[TextPart("and now?")])])


def test_our_body_is_the_sdks_own_for_the_same_conversation() -> None:
    ours = to_wire(conversation(), provider="gem")
    contents = [types.Content.model_validate_json(json.dumps(c)) for c in ours["contents"]]
    tools = [types.Tool.model_validate_json(json.dumps(t)) for t in ours["tools"]]
    system = types.Content.model_validate_json(json.dumps(ours["systemInstruction"]))
    thinking = types.ThinkingConfig.model_validate_json(
        json.dumps(ours["generationConfig"]["thinkingConfig"]))
    with scripted_server({("POST", STREAM_PATH): lambda _: sse(ANSWER)}) as server:
        sdk_stream(server.url, contents=contents, config=types.GenerateContentConfig(
            system_instruction=system, tools=tools, max_output_tokens=800, temperature=0.3,
            thinking_config=thinking))
        theirs = server.requests[-1].json()
    assert camel(theirs["contents"]) == ours["contents"]
    assert camel(theirs["tools"]) == ours["tools"]
    assert camel(theirs["generationConfig"]) == ours["generationConfig"]
    assert camel(theirs["systemInstruction"]["parts"]) == ours["systemInstruction"]["parts"]


def test_the_sdk_pages_the_model_list_as_we_do() -> None:
    with scripted_server({("GET", "/v1beta/models"): model_pages}) as server:
        with genai.Client(api_key=KEY, http_options=types.HttpOptions(
                base_url=server.url, api_version="v1beta")) as sdk:
            names = [m.name for m in sdk.models.list(config={"page_size": 1000})]
        theirs = [(r.query.get("pageSize"), r.query.get("pageToken")) for r in server.requests]
        server.requests.clear()

        async def ours() -> list[str]:
            provider = GeminiProvider("gem", server.url, api_key=KEY)
            try:
                return [m.id for m in await provider.list_models(chat_only=False)]
            finally:
                await provider.aclose()

        our_ids = asyncio.run(ours())
        mine = [(r.query.get("pageSize"), r.query.get("pageToken")) for r in server.requests]
    assert [n.removeprefix("models/") for n in names] == our_ids
    assert theirs == mine
