"""Files a test writes into a project folder."""

from __future__ import annotations

from pathlib import Path

__all__ = ["write_file"]


def write_file(path: Path, text: str) -> Path:
    """Write `text` (UTF-8) to `path`, making its folders first; return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
