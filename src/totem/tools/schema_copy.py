"""Calls that copy the tool's schema instead of filling it in, and calls to tools that are not.

Small models paste what they were shown: a `task` call whose description argument is the
tool's own description, `{"path": {"type": "string", "description": ...}}`. Such a call is
refused with an error that says so, instead of running with the copied text. A call to a
tool named after a file with a content (`hello.txt`) is a write of that file.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from totem.messages import ToolPart
from totem.providers.base import ToolSpec
from totem.run.textcalls import repair_call
from totem.tools.base import ToolError

__all__ = ["copied_schema", "repair_unknown", "spec_texts"]

_SCHEMA_KEYS = frozenset({"type", "description", "properties", "required", "anyOf", "items"})
_MIN_COPIED = 12  # shorter texts ("path", "a.py") may equal a description by chance


def spec_texts(spec: ToolSpec) -> list[str]:
    """The tool's description and its arguments' descriptions, as the model saw them."""
    texts = [spec.description]
    for prop in spec.parameters.get("properties", {}).values():
        if isinstance(prop, dict) and isinstance(prop.get("description"), str):
            texts.append(prop["description"])
    return texts


def _plain(text: str) -> str:
    return " ".join(text.split()).casefold()


def _arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw or "{}")
        except json.JSONDecodeError:
            return {}
    return raw if isinstance(raw, dict) else {}


def _declared_plain(spec: ToolSpec, key: str) -> bool:
    """Whether argument `key` is declared as a plain value (not an object)."""
    prop = spec.parameters.get("properties", {}).get(key)
    return isinstance(prop, dict) and prop.get("type") in ("string", "number", "integer",
                                                           "boolean")


def copied_schema(raw: str | dict[str, Any] | None, spec: ToolSpec) -> None:
    """Raise a ToolError for the model when an argument is a copy of the schema's text."""
    shown = {_plain(t) for t in spec_texts(spec) if len(t.strip()) >= _MIN_COPIED}
    name = spec.name
    for key, value in _arguments(raw).items():
        if isinstance(value, str) and _plain(value) in shown:
            raise ToolError(
                f"The {key} you gave {name} is the text of the tool's description, copied "
                f"from its definition. Put the real value in {key}, taken from the task and "
                "from what the tools showed you."
            )
        if (isinstance(value, dict) and "type" in value and set(value) <= _SCHEMA_KEYS
                and _declared_plain(spec, key)):
            raise ToolError(
                f"The {key} you gave {name} is a copy of its schema ({json.dumps(value)[:80]}), "
                f"not a value. Send {key} as a plain value."
            )


def repair_unknown(part: ToolPart, known: Collection[str]) -> None:
    """Rename a call to a tool that does not exist when it clearly means a real one."""
    args = _arguments(part.input if part.input is not None else part.raw_input)
    repaired = repair_call(part.name, args, known)
    if repaired is not None:
        part.name, part.input = repaired
        part.raw_input = json.dumps(part.input)
