"""The image tool against a local OpenAI-compatible images endpoint that answers a real PNG."""

from __future__ import annotations

import base64
import dataclasses
import json
import struct
import zlib

import pytest

from tests.support.integration_servers import image_server, png
from tests.support.tool_calls import Call, MakeContext, answering
from totem.policy.permission import PermissionDenied
from totem.settings.integrations import ImageSettings
from totem.settings.secret import Secret
from totem.tools.base import ToolContext, ToolError
from totem.tools.image import ImageTool

KEY = "sk-image-test-0123456789abcdef"


def tool(url: str, key: str = KEY, model: str = "gpt-image-1") -> ImageTool:
    return ImageTool(ImageSettings(url + "/v1", Secret(key), model=model, size="8x6"))


def decoded_pixels(data: bytes) -> bytes:
    """The IDAT of a PNG, inflated: the file is a real image, not just a signature."""
    at, idat = 8, b""
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"IDAT":
            idat += data[at + 8:at + 8 + length]
        at += 12 + length
    return zlib.decompress(idat)


def test_saves_a_png_and_shows_it_to_a_model_that_sees(ctx: ToolContext, call: Call) -> None:
    seeing = dataclasses.replace(ctx, vision=True)
    with image_server(KEY) as server:
        result = call(tool(server.url), seeing, prompt="A red fox in snow",
                      path="art/fox.png")
        sent = server.requests[0]
    assert sent.path == "/v1/images/generations"
    assert json.loads(sent.body) == {"model": "gpt-image-1", "prompt": "A red fox in snow",
                                     "n": 1, "size": "8x6"}
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    saved = (ctx.root / "art/fox.png").read_bytes()
    assert saved == png(8, 6) and len(decoded_pixels(saved)) == 6 * (1 + 8 * 3)
    assert result.output == f"Saved art/fox.png (8x6 PNG, {len(saved)} bytes)."
    assert [i.media_type for i in result.images] == ["image/png"]
    assert base64.b64decode(result.images[0].data) == saved


def test_a_path_only_for_a_model_without_images(ctx: ToolContext, call: Call) -> None:
    with image_server(KEY) as server:
        result = call(tool(server.url, model="sd-turbo"), ctx, prompt="Two cats")
        body = json.loads(server.requests[0].body)
    assert body["response_format"] == "b64_json" and body["model"] == "sd-turbo"
    assert result.images == []
    path = result.output.split()[1]
    assert path.startswith("images/two-cats-") and (ctx.root / path).is_file()


def test_errors_are_clear_and_never_show_the_key(ctx: ToolContext, call: Call) -> None:
    wrong = "sk-wrong-key-0123456789abcdef"
    with image_server(KEY) as server:
        with pytest.raises(ToolError) as refused:
            call(tool(server.url, wrong), ctx, prompt="x", path="a.png")
        assert "HTTP 401: Incorrect API key provided." in str(refused.value)
        assert wrong not in str(refused.value)
        with pytest.raises(ToolError, match="ending in .png"):
            call(tool(server.url), ctx, prompt="x", path="a.jpg")
        with pytest.raises(ToolError, match="outside the project"):
            call(tool(server.url), ctx, prompt="x", path="../a.png")
        assert len(server.requests) == 1
    assert not (ctx.root / "a.png").exists()


def test_it_asks_before_anything_leaves(make_ctx: MakeContext, call: Call) -> None:
    with image_server(KEY) as server:
        with pytest.raises(PermissionDenied):
            call(tool(server.url), make_ctx(mode="headless"), prompt="x", path="p.png")
        person = make_ctx(mode="interactive")
        asked = answering(person, "reject")
        with pytest.raises(PermissionDenied):
            call(tool(server.url), person, prompt="A lighthouse", path="p.png")
        assert server.requests == []
    assert asked[0].permission == "image" and asked[0].patterns == ["p.png"]
    assert asked[0].title == ("generate an image with gpt-image-1 at 127.0.0.1 and save it as "
                              "p.png: A lighthouse")
