"""image: generate a picture from a prompt through an OpenAI-compatible
`/v1/images/generations` endpoint (OpenAI, LocalAI, stable-diffusion servers...), save it as
a PNG in the project, and show it to a model that takes images (a path only for the others).

Absent until `integrations.image.base_url` is set. The call asks first (`image` permission,
pattern the file's path): the prompt leaves the machine and a file is written.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
import time
from typing import ClassVar

import httpx
from pydantic import BaseModel, Field

from totem import __version__
from totem.messages import ImageBlock
from totem.policy.redact import Redactor
from totem.providers.transport.retry import error_message
from totem.settings.integrations import ImageSettings
from totem.tools.base import ToolContext, ToolError, ToolResult

__all__ = ["ImageInput", "ImageTool"]

TIMEOUT = 180.0  # image models take their time
PNG = b"\x89PNG\r\n\x1a\n"
MAX_SHOWN = 4 * 1024 * 1024  # bytes of PNG sent back to the model


class ImageInput(BaseModel):
    prompt: str = Field(description="What the image shows.")
    path: str | None = Field(None, description="Where to save the PNG (default images/NAME.png).")


class ImageTool:
    name: ClassVar[str] = "image"
    kind: ClassVar[str] = "integration"
    description: ClassVar[str] = ("Generate an image from a prompt and save it as a PNG in the "
                                  "project; returns its path (and the image, for models that "
                                  "take images).")
    read_only: ClassVar[bool] = False
    Input: ClassVar[type[BaseModel]] = ImageInput

    def __init__(self, settings: ImageSettings) -> None:
        self.settings = settings

    async def run(self, args: ImageInput, ctx: ToolContext) -> ToolResult:
        prompt = args.prompt.strip()
        if not prompt:
            raise ToolError("The prompt is empty.")
        wanted = args.path or f"images/{_slug(prompt)}-{time.strftime('%Y%m%d-%H%M%S')}.png"
        if not wanted.lower().endswith(".png"):
            raise ToolError(f"The image is saved as a PNG: give a path ending in .png, "
                            f"not {wanted!r}.")
        path = await ctx.resolve(wanted)
        relative = ctx.relative(path)
        host = httpx.URL(self.settings.base_url).host
        await ctx.ask("image", [relative], title=f"generate an image with {self.settings.model} "
                      f"at {host} and save it as {relative}: {prompt[:200]}")
        ctx.abort.check()
        data = await self._generate(prompt)
        ctx.snapshot(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        width, height = struct.unpack(">II", data[16:24])
        text = f"Saved {relative} ({width}x{height} PNG, {len(data)} bytes)."
        if not ctx.vision or len(data) > MAX_SHOWN:
            return ToolResult(text, title=relative)
        shown = ImageBlock("image/png", base64.b64encode(data).decode("ascii"))
        return ToolResult(text, title=relative, images=[shown])

    async def _generate(self, prompt: str) -> bytes:
        key = self.settings.key.reveal() if self.settings.key is not None else None
        if self.settings.key is not None and not key:
            raise ToolError(f"The image key is not available: integrations.image.key is "
                            f"{self.settings.key.source()}.")
        redact = Redactor([key] if key else [])
        body: dict[str, object] = {"model": self.settings.model, "prompt": prompt, "n": 1,
                                   "size": self.settings.size}
        if not self.settings.model.startswith("gpt-image"):  # those always answer base64
            body["response_format"] = "b64_json"
        headers = {"User-Agent": f"totem/{__version__}"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        try:
            async with httpx.AsyncClient(timeout=TIMEOUT) as client:
                response = await client.post(f"{self.settings.base_url}/images/generations",
                                             json=body, headers=headers)
                if response.status_code >= 400:
                    message = error_message(response.content, f"HTTP {response.status_code}")
                    raise ToolError(redact(f"The image server answered HTTP "
                                           f"{response.status_code}: {message}"))
                return await _png(response, client)
        except httpx.HTTPError as exc:
            raise ToolError(f"The image server could not be reached: "
                            f"{type(exc).__name__}.") from None


async def _png(response: httpx.Response, client: httpx.AsyncClient) -> bytes:
    """The PNG of an images answer: `data[0].b64_json`, or the file at `data[0].url`."""
    try:
        first = response.json()["data"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ToolError("The image server's answer has no image (data[0]).") from None
    if isinstance(first, dict) and isinstance(first.get("b64_json"), str):
        try:
            data = base64.b64decode(first["b64_json"], validate=True)
        except (binascii.Error, ValueError):
            raise ToolError("The image server's b64_json is not base64.") from None
    elif isinstance(first, dict) and isinstance(first.get("url"), str):
        data = (await client.get(first["url"])).content
    else:
        raise ToolError("The image server's answer has neither b64_json nor url.")
    if not data.startswith(PNG) or len(data) < 24:
        raise ToolError("The image server did not send a PNG.")
    return data


def _slug(prompt: str) -> str:
    words = re.findall(r"[a-z0-9]+", prompt.lower())[:6]
    return "-".join(words)[:48] or "image"
