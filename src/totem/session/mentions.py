"""`@path` in a request attaches the file: its text follows the request, for the model only.

A mention is `@` at the start of a word followed by the path of a file inside the project;
other words with `@` (an e-mail address, a decorator) are left alone. Binary files and files
past the size limit are named with a note instead of their content.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

__all__ = ["MAX_ATTACHED", "mentioned", "mentioned_images", "with_mentions"]

MAX_ATTACHED = 200_000  # bytes of one attached file
_MENTION = re.compile(r"(?<!\S)@([^\s@]+)")


def _inside(path: Path, root: Path) -> bool:
    real = Path(os.path.realpath(path))
    return real == root or root in real.parents


def _attachment(relative: str, path: Path, redact: Callable[[str], str]) -> str:
    data = path.read_bytes()
    if len(data) > MAX_ATTACHED:
        return (f"Attached file {relative}: {len(data):,} bytes, past the {MAX_ATTACHED:,}-byte "
                "limit; not included (read it with the read tool).")
    if b"\x00" in data[:8192]:
        return f"Attached file {relative}: a binary file; not included."
    text = redact(data.decode("utf-8", errors="replace"))
    fence = "````" if "```" in text else "```"
    return f"Attached file {relative}:\n{fence}\n{text.rstrip()}\n{fence}"


def mentioned(text: str, root: Path) -> list[tuple[str, Path]]:
    """The files `text` mentions, inside the project: (as written, real path), once each."""
    real_root = Path(os.path.realpath(root))
    found: dict[str, Path] = {}
    for match in _MENTION.finditer(text):
        relative = match.group(1).rstrip(".,;:!?)")
        path = real_root / relative
        if relative not in found and path.is_file() and _inside(path, real_root):
            found[relative] = path
    return list(found.items())


def with_mentions(text: str, root: Path, *, redact: Callable[[str], str]) -> str | None:
    """The request with its mentioned files attached (images apart: see `mentioned_images`);
    None when it mentions none."""
    from totem.session.attachments import is_image

    attached = [_attachment(relative, path, redact)
                for relative, path in mentioned(text, root) if not is_image(path)]
    if not attached:
        return None
    return text + "\n\n" + "\n\n".join(attached)


def mentioned_images(text: str, root: Path) -> list[Path]:
    """The images `text` mentions (`@shot.png`), to attach as images."""
    from totem.session.attachments import is_image

    return [path for _, path in mentioned(text, root) if is_image(path)]
