"""Images a person attaches to a request (`totem run --image FILE`, `@picture.png` in the
chat): read as image blocks for a model that takes images, refused for one that does not."""

from __future__ import annotations

import base64
from pathlib import Path

from totem.messages import ImageBlock
from totem.settings.config import ConfigError

__all__ = ["IMAGE_TYPES", "MAX_IMAGE_BYTES", "check_vision", "is_image", "load_image"]

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
               ".gif": "image/gif", ".webp": "image/webp"}
MAX_IMAGE_BYTES = 5 * 1024 * 1024


def is_image(path: Path) -> bool:
    return path.suffix.lower() in IMAGE_TYPES


def load_image(path: Path) -> ImageBlock:
    """The image at `path`; ConfigError (a usage error) when it cannot be one."""
    media_type = IMAGE_TYPES.get(path.suffix.lower())
    if media_type is None:
        kinds = ", ".join(sorted(IMAGE_TYPES))
        raise ConfigError(f"{path} is not an image totem can attach ({kinds}).")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"Cannot read the image {path}: {exc.strerror or exc}.") from None
    if len(data) > MAX_IMAGE_BYTES:
        raise ConfigError(f"The image {path} is {len(data) // 1024} KiB; at most "
                          f"{MAX_IMAGE_BYTES // (1024 * 1024)} MiB can be attached.")
    return ImageBlock(media_type, base64.b64encode(data).decode("ascii"))


def check_vision(label: str, vision: bool | None) -> None:
    """Refuse images for a model that does not take them (or is not known to)."""
    if vision is not True:
        raise ConfigError(f"The model {label} does not take images (or is not known to), so "
                          "the attached image cannot be sent. Choose a model that takes images.")
