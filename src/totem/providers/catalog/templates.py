"""Provider templates: the known servers and clouds, as data (`templates.json`).

A template is what `totem providers add ID` writes into the configuration: the kind of
adapter, the base URL, where the key usually lives. Local servers carry the port that
`detect.py` probes. Adding a provider that speaks an existing protocol is adding an entry
to the JSON file; "other" is any OpenAI-compatible URL.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["Template", "template", "templates"]

_DATA = Path(__file__).with_name("templates.json")


@dataclass(frozen=True, slots=True)
class Template:
    id: str
    label: str
    kind: str  # the adapter (registry.py)
    base_url: str  # "" when the user must give one (other, bedrock)
    key_env: str | None = None  # the variable that usually holds the key
    needs_key: bool = False
    local: bool = False  # a server on this computer
    port: int | None = None  # its usual port
    detect: bool = False  # probed by `totem providers detect`
    options: dict[str, Any] = field(default_factory=dict)  # written with the provider
    note: str = ""


def _template(data: dict[str, Any]) -> Template:
    port = data.get("port")
    return Template(
        id=str(data["id"]),
        label=str(data.get("label") or data["id"]),
        kind=str(data["kind"]),
        base_url=str(data.get("base_url") or "").rstrip("/"),
        key_env=str(data["key_env"]) if data.get("key_env") else None,
        needs_key=bool(data.get("needs_key", False)),
        local=bool(data.get("local", False)),
        port=int(port) if isinstance(port, int) else None,
        detect=bool(data.get("detect", False)),
        options=dict(data.get("options") or {}),
        note=str(data.get("note") or ""),
    )


@lru_cache(maxsize=1)
def _all() -> tuple[Template, ...]:
    data = json.loads(_DATA.read_text(encoding="utf-8"))
    return tuple(_template(item) for item in data["templates"])


def templates() -> list[Template]:
    """Every template, in the order of the file (local servers first)."""
    return list(_all())


def template(id: str) -> Template:
    """The template `id` (case-insensitive); KeyError naming the known ids otherwise."""
    wanted = id.strip().lower()
    for item in _all():
        if item.id == wanted:
            return item
    known = ", ".join(t.id for t in _all())
    raise KeyError(f"no provider template '{id}'; known: {known}")
