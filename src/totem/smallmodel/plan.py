"""The plan step: before its first step, a small model says what the request needs, in a
constrained answer that totem then checks against the project and holds the run to.

What a request means is the model's to say, in any wording and any language. The answer
can only be

    {"files": [a file of the project, ...], "new_files": [path, ...],
     "delete": [a file of the project, ...], "rename": [{"from": a file, "to": path}, ...],
     "kind": "question" | "change"}

with `files`, `delete` and `rename`'s `from` an enum of the project's real files (so it
names nothing that is not there). totem checks `new_files` and `rename`'s `to` (inside the
project, not existing yet), reads a planned deletion or rename as a change, and uses the
plan so:
the files are read for the model before its first step; for a question no step is offered
a tool that changes a file; for a change the first step must be a call, and an answer with
no change made is sent back; a deletion or rename the model planned and has not made is
put to it once, in its own words (see smallmodel/assist.py). totem never deletes or renames
anything itself.
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
MAX_PLAN_MOVES = 2  # deletions, and renames, a plan may name
MAX_ENUM_FILES = 200  # the project's files offered by name, the shallowest first


@dataclass(frozen=True, slots=True)
class Plan:
    kind: Literal["question", "change"]
    files: tuple[str, ...] = ()
    new_files: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()
    renames: tuple[tuple[str, str], ...] = ()
    said: dict[str, Any] = field(default_factory=dict)  # the model's answer as it came


def offered(files: Sequence[ProjectFile]) -> list[str]:
    """The paths the plan may name: the project's files, the shallowest first."""
    paths = sorted((f.path for f in files), key=lambda p: (p.count("/"), p))
    return paths[:MAX_ENUM_FILES]


def plan_schema(paths: Sequence[str]) -> dict[str, Any]:
    files: dict[str, Any] = {"type": "array", "maxItems": MAX_PLAN_FILES}
    delete: dict[str, Any] = {"type": "array", "maxItems": MAX_PLAN_MOVES}
    rename: dict[str, Any] = {"type": "array", "maxItems": MAX_PLAN_MOVES, "items": {
        "type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
        "required": ["from", "to"], "additionalProperties": False}}
    if paths:
        files["items"] = delete["items"] = {"enum": list(paths)}
        rename["items"]["properties"]["from"] = {"enum": list(paths)}
    else:
        files["maxItems"] = delete["maxItems"] = rename["maxItems"] = 0
    return {
        "type": "object",
        "properties": {
            "files": files,
            "new_files": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            "delete": delete,
            "rename": rename,
            "kind": {"enum": ["question", "change"]},
        },
        "required": ["files", "new_files", "delete", "rename", "kind"],
        "additionalProperties": False,
    }


def plan_prompt(paths: Sequence[str], request: str) -> tuple[str, str]:
    """The plan step's system prompt and message."""
    listing = "\n".join(f"- {p}" for p in paths) or "(no files yet)"
    message = text("plan_request").replace("{files}", listing).replace("{request}", request)
    return text("plan"), message


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
    new = [p.strip() for p in said.get("new_files") or [] if _new_path(p, root, known)]
    delete = tuple(dict.fromkeys(
        f for f in said.get("delete") or [] if isinstance(f, str) and f in known
    ))[:MAX_PLAN_MOVES]
    renames = tuple(
        (m["from"], m["to"].strip()) for m in said.get("rename") or []
        if isinstance(m, dict) and m.get("from") in known and _new_path(m.get("to"), root, known)
    )[:MAX_PLAN_MOVES]
    # the model's own fields say a file changes: its plan is a change, whatever its kind said
    kind: Literal["question", "change"] = (
        "change" if delete or renames or said["kind"] == "change" else "question")
    return Plan(kind, files, tuple(new), delete, renames, said)


def _new_path(path: object, root: Path, known: set[str]) -> bool:
    """Whether `path` may be made: inside the project, not there yet."""
    if not isinstance(path, str) or not path.strip() or path.strip() in known:
        return False
    target = (root / path.strip()).resolve()
    return root.resolve() in target.parents and not target.exists()
