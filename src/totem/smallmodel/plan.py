"""The plan step: before its first step, a small model says what the request needs, in a
constrained answer that totem then checks against the project and holds the run to.

What a request means is the model's to say, in any wording and any language. The answer
can only be

    {"files": [a file of the project, ...], "new_files": [path, ...],
     "removed": [a file of the project, ...],
     "kind": "question" | "change", "parts": [a short phrase, ...]}

with `files` and `removed` enums of the project's real files (so they name
nothing that is not there). `removed` are the files the request
asks to delete, rename or move away: the 1.5B, offered write and bash, wrote such a file
(empty, or made up) instead of removing it, or wrote the renamed file and left the old one;
with the plan saying so, a write of such a file is refused once, and an answer while one is
still there (and not changed in place) is sent back once (the model still removes it with
its own command, which the person allows). The 1.5B's plan also names a file that is only
to lose a line ("remove the unused import from main.py": main.py, in 2 to 3 of 4 wordings,
whatever the field's name or description), hence "once": the refusal says to write again if
the request only changes the file's text, a file changed in place is not sent back, and
each such file is first asked about again, alone ("still there" or "gone" once the request
is done, smallmodel/assist.py): at 14dd1eb, without that question, the 1.5B ran `rm main.py`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from totem.smallmodel.project import ProjectFile
from totem.smallmodel.surface import text

__all__ = ["MAX_PLAN_FILES", "Plan", "parse_plan", "plan_prompt", "plan_schema"]

MAX_PLAN_FILES = 3
MAX_ENUM_FILES = 200  # the project's files offered by name, the shallowest first
MAX_PARTS = 4
MAX_PART_CHARS = 120


@dataclass(frozen=True, slots=True)
class Plan:
    kind: Literal["question", "change"]
    files: tuple[str, ...] = ()
    new_files: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()  # files the request asks to delete, rename or move away
    parts: tuple[str, ...] = ()
    said: dict[str, Any] = field(default_factory=dict)  # the model's answer as it came


def offered(files: Sequence[ProjectFile]) -> list[str]:
    """The paths the plan may name: the project's files, the shallowest first."""
    paths = sorted((f.path for f in files), key=lambda p: (p.count("/"), p))
    return paths[:MAX_ENUM_FILES]


def plan_schema(paths: Sequence[str], *, removed: bool = False) -> dict[str, Any]:
    """The plan's schema; with `removed` (the `removals` lever on) it asks for that field."""
    files: dict[str, Any] = {"type": "array", "maxItems": MAX_PLAN_FILES}
    if paths:
        files["items"] = {"enum": list(paths)}
    else:
        files["maxItems"] = 0
    properties: dict[str, Any] = {
        "files": files,
        "new_files": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "removed": {**files},
        "kind": {"enum": ["question", "change"]},
        "parts": {"type": "array", "maxItems": MAX_PARTS,
                  "items": {"type": "string", "minLength": 1, "maxLength": MAX_PART_CHARS}},
    }
    if not removed:
        del properties["removed"]
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def plan_prompt(paths: Sequence[str], request: str, *, removed: bool = False
                ) -> tuple[str, str]:
    """The plan step's system prompt and message (`removed`: as `plan_schema`)."""
    listing = "\n".join(f"- {p}" for p in paths) or "(no files yet)"
    fields = ('"files", "new_files", "removed", "kind" and "parts"' if removed
              else '"files", "new_files", "kind" and "parts"')
    message = (text("plan_request").replace("{files}", listing)
               .replace("{request}", request).replace("{fields}", fields))
    system = "\n".join(line for line in text("plan").splitlines()
                       if removed or not line.startswith('- "removed"'))
    return system, message


def parse_plan(answer: str, root: Path, paths: Sequence[str]) -> Plan | None:
    """The plan in `answer`, checked against the project: named files that exist, new files
    inside the project that do not; None when the answer is not a plan at all."""
    try:
        said = json.loads(answer)
    except ValueError:
        return None
    if not isinstance(said, dict) or said.get("kind") not in ("question", "change"):
        return None
    known = set(paths)
    files = tuple(dict.fromkeys(
        f for f in said.get("files") or [] if isinstance(f, str) and f in known
    ))[:MAX_PLAN_FILES]
    base = root.resolve()
    new: list[str] = []
    for path in said.get("new_files") or []:
        if not isinstance(path, str) or not path.strip() or path in known:
            continue
        target = (root / path).resolve()
        if base in target.parents and not target.exists():
            new.append(path.strip())
    removed = tuple(dict.fromkeys(
        f for f in said.get("removed") or [] if isinstance(f, str) and f in known
    ))[:MAX_PLAN_FILES]
    parts = tuple(dict.fromkeys(
        " ".join(p.split())[:MAX_PART_CHARS] for p in said.get("parts") or []
        if isinstance(p, str) and p.strip()))[:MAX_PARTS]
    return Plan(said["kind"], files, tuple(new), removed, parts, said)
