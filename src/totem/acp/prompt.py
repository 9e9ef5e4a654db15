"""An ACP prompt as totem's request: the text the person typed, with the editor's mentions.

A link to a file of the project (`@file` in Zed, a `resource_link`) becomes an `@path`
mention, which the session attaches as it does for the terminal; an embedded resource (the
editor's own copy of a file or a selection, unsaved changes included) is attached after the
text, its secrets hidden; images go as images; what totem cannot use (audio, a binary
resource that is no image) is named in a note instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from totem.messages import ImageBlock

__all__ = ["Block", "Request", "request_from"]

Block = (TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock
         | EmbeddedResourceContentBlock)


@dataclass(slots=True)
class Request:
    text: str
    images: list[ImageBlock] = field(default_factory=list)


def _project_path(uri: str, root: Path) -> str | None:
    """The path from the root of a `file://` URI inside the project, or None."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    real = os.path.realpath(unquote(parsed.path))
    base = os.path.realpath(root)
    if real != base and not real.startswith(base + os.sep):
        return None
    return os.path.relpath(real, base)


def _fenced(label: str, text: str) -> str:
    fence = "````" if "```" in text else "```"
    return f"{label}:\n{fence}\n{text.rstrip()}\n{fence}"


def _name(uri: str, root: Path) -> str:
    return _project_path(uri, root) or uri


def request_from(blocks: Sequence[Block], root: Path, *,
                 redact: Callable[[str], str]) -> Request:
    inline: list[str] = []
    attached: list[str] = []
    images: list[ImageBlock] = []
    for block in blocks:
        match block:
            case TextContentBlock(text=text):
                inline.append(text)
            case ImageContentBlock(data=data, mime_type=mime):
                images.append(ImageBlock(mime, data))
            case ResourceContentBlock(uri=uri, name=name):
                relative = _project_path(uri, root)
                inline.append(f" @{relative} " if relative else f" [{name}]({uri}) ")
            case EmbeddedResourceContentBlock(resource=TextResourceContents(uri=uri, text=text)):
                attached.append(_fenced(f"Attached from the editor: {_name(uri, root)}",
                                        redact(text)))
            case EmbeddedResourceContentBlock(resource=BlobResourceContents() as blob):
                if (blob.mime_type or "").startswith("image/"):
                    images.append(ImageBlock(blob.mime_type or "image/png", blob.blob))
                else:
                    attached.append(f"[The editor attached {_name(blob.uri, root)}, a binary "
                                    "resource; it is not included.]")
            case AudioContentBlock():
                attached.append("[The editor attached audio; totem does not take audio.]")
    text = "".join(inline).strip()
    if attached:
        text = (text + "\n\n" if text else "") + "\n\n".join(attached)
    return Request(text=text, images=images)
