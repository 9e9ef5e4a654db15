"""How a file's text is put in a fenced block: shown to a model (tools/read.py's PlainRead)
and read back from it (providers/localserver/edit_formats.py) the same way."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

__all__ = ["fence_for", "language_of"]

_LANGUAGES = {
    ".py": "python", ".js": "javascript", ".mjs": "javascript", ".ts": "typescript",
    ".tsx": "tsx", ".jsx": "jsx", ".json": "json", ".md": "markdown", ".sh": "bash",
    ".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".ini": "ini", ".cfg": "ini",
    ".html": "html", ".css": "css", ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c", ".cpp": "cpp", ".rb": "ruby", ".sql": "sql", ".txt": "text",
}


def language_of(path: str) -> str:
    """The fence's language tag for `path` ("" when none is known)."""
    return _LANGUAGES.get(PurePosixPath(path).suffix.lower(), "")


def fence_for(text: str) -> str:
    """Three backticks, or more when `text` has a line that starts with three (a Markdown
    file with code in it), so that the fence around it is never closed by its own lines."""
    longest = max((len(m.group(0)) for m in re.finditer(r"(?m)^`{3,}", text)), default=0)
    return "`" * max(3, longest + 1)
