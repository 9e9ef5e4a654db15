"""An image the person attaches travels in the user message of every wire, in that API's
own form, after the text."""

from __future__ import annotations

from typing import Any

from totem.messages import ImageBlock, Message, TextPart
from totem.providers import openai_chat
from totem.providers.base import ModelRequest
from totem.providers.wire import anthropic, bedrock, gemini, ollama

PNG = ImageBlock("image/png", "iVBORw0KGgo=")


def _request() -> ModelRequest:
    part = TextPart("what is in this picture?", images=[PNG])
    return ModelRequest(model="m", system="sys",
                        messages=[Message(id="u", session_id="s", role="user", parts=[part])])


def _user(body: dict[str, Any], key: str = "messages") -> Any:
    return next(m for m in body[key] if m.get("role") == "user")


def test_openai_sends_an_image_url_part() -> None:
    content = _user(openai_chat.to_wire(_request()))["content"]
    assert content == [{"type": "text", "text": "what is in this picture?"},
                       {"type": "image_url", "image_url": {"url": "data:image/png;base64,"
                                                                  "iVBORw0KGgo="}}]


def test_anthropic_sends_an_image_block() -> None:
    content = _user(anthropic.to_wire(_request()))["content"]
    content[1].pop("cache_control", None)  # the prompt cache marks the last block
    assert content[1] == {"type": "image", "source": {"type": "base64",
                                                      "media_type": "image/png",
                                                      "data": "iVBORw0KGgo="}}


def test_gemini_sends_inline_data() -> None:
    parts = _user(gemini.to_wire(_request()), "contents")["parts"]
    assert parts[1] == {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}


def test_bedrock_sends_an_image_block() -> None:
    content = _user(bedrock.to_wire(_request()))["content"]
    assert content[1] == {"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo="}}}


def test_ollama_sends_the_images_list() -> None:
    message = _user(ollama.to_wire(_request()))
    assert message == {"role": "user", "content": "what is in this picture?",
                       "images": ["iVBORw0KGgo="]}


def test_a_message_without_images_is_unchanged() -> None:
    plain = ModelRequest(model="m", system="sys", messages=[
        Message(id="u", session_id="s", role="user", parts=[TextPart("hi")])])
    assert _user(openai_chat.to_wire(plain))["content"] == "hi"
