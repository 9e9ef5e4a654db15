"""totem's events as ACP session updates: message and thought chunks, tool calls with their
status, locations and diffs, the plan (the todo list, or a plan-mode answer's steps), notices
as message text.

Pure functions from an `Event` to the updates to send; the session keeps nothing here but
the tool calls' inputs (a tool's end needs its start's path for the diff's location).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, TypeAlias

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    ContentToolCallContent,
    FileEditToolCallContent,
    PlanEntry,
    PlanEntryStatus,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolKind,
)

from totem.events import (
    Notice,
    PlanProposed,
    ReasoningDelta,
    TextDelta,
    TodoUpdated,
    ToolEnd,
    ToolProgress,
    ToolStart,
)

__all__ = ["Update", "diff_contents", "notice_text", "tool_end", "tool_kind", "tool_start",
           "translate"]

Update: TypeAlias = (AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress
                     | AgentPlanUpdate)

_KINDS: dict[str, ToolKind] = {
    "read": "read", "glob": "search", "grep": "search", "write": "edit", "edit": "edit",
    "patch": "edit", "bash": "execute", "process": "execute", "fetch": "fetch",
    "websearch": "fetch", "task": "think", "todo": "think", "skill": "read",
}
_PLAN_STATUS: dict[str, PlanEntryStatus] = {
    "pending": "pending", "in_progress": "in_progress", "done": "completed",
    "completed": "completed",
}


_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def tool_kind(name: str) -> ToolKind:
    return _KINDS.get(name, "other")


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def _title(name: str, args: dict[str, Any] | None) -> str:
    args = args or {}
    for key in ("command", "path", "pattern", "url", "query", "description"):
        value = args.get(key)
        if isinstance(value, str) and value:
            short = value if len(value) <= 120 else value[:120] + "..."
            return f"{name}: {short}"
    return name


def _locations(args: dict[str, Any] | None, root: Path) -> list[ToolCallLocation] | None:
    path = (args or {}).get("path")
    if not isinstance(path, str) or not path:
        return None
    full = path if os.path.isabs(path) else str(root / path)
    line = (args or {}).get("offset")
    return [ToolCallLocation(path=full, line=line if isinstance(line, int) else None)]


def tool_start(event: ToolStart, root: Path) -> ToolCallStart:
    return ToolCallStart(
        session_update="tool_call", tool_call_id=event.call_id,
        title=_title(event.name, event.input), kind=tool_kind(event.name), status="in_progress",
        raw_input=event.input, locations=_locations(event.input, root),
    )


def diff_contents(diff: str, root: Path) -> list[FileEditToolCallContent]:
    """A unified diff (one or more files) as ACP diff contents: per file, the lines its hunks
    take away and put in (the changed region with its context, not the whole file, as an
    edit's old and new strings); a created file has no old text."""
    found: list[FileEditToolCallContent] = []
    path = ""
    created = False
    old: list[str] = []
    new: list[str] = []

    def close() -> None:
        if path:
            found.append(FileEditToolCallContent(
                type="diff", path=str(root / path), old_text=None if created else "".join(old),
                new_text="".join(new)))

    lines = diff.splitlines()  # each line of a hunk stands for a whole line, "\n" ended
    last = ""
    left = [0, 0]  # lines of the current hunk still to come: old side, new side
    for index, line in enumerate(lines):
        if line.startswith("\\"):  # "\ No newline at end of file": the line before
            if last in (" ", "-") and old:
                old[-1] = old[-1].removesuffix("\n")
            if last in (" ", "+") and new:
                new[-1] = new[-1].removesuffix("\n")
        elif (left[0] > 0 or left[1] > 0) and line[:1] in (" ", "-", "+"):
            last = line[:1]
            if last != "+":
                old.append(line[1:] + "\n")
                left[0] -= 1
            if last != "-":
                new.append(line[1:] + "\n")
                left[1] -= 1
        elif line.startswith("@@"):
            counts = _HUNK.match(line)
            left = [int(counts[1] or 1), int(counts[2] or 1)] if counts else [0, 0]
        elif line.startswith("--- "):
            close()
            created = line.strip() == "--- /dev/null"
            source = line[4:].strip()
            path, old, new = (source[2:] if source.startswith("a/") else ""), [], []
        elif line.startswith("+++ ") and index > 0 and lines[index - 1].startswith("--- "):
            target = line[4:].strip()
            if target.startswith("b/"):
                path = target[2:]
    close()
    return found


def tool_end(event: ToolEnd, root: Path) -> ToolCallProgress:
    content: list[ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent] = []
    content.extend(diff_contents(event.diff, root) if event.diff else [])
    if event.output:
        content.append(ContentToolCallContent(type="content", content=_text(event.output)))
    return ToolCallProgress(
        session_update="tool_call_update", tool_call_id=event.call_id,
        status="failed" if event.is_error else "completed", content=content or None,
        raw_output={"output": event.output, "is_error": event.is_error},
        title=_title(event.name, None) + (f": {event.title}" if event.title else ""),
    )


def notice_text(event: Notice) -> str:
    """A notice as message text: a quoted line the person sees between the answer's parts."""
    label = {"info": "totem", "warning": "totem (warning)", "error": "totem (error)"}[event.level]
    return f"\n\n> **{label}:** {event.text}\n\n"


def translate(event: object, root: Path) -> list[Update]:
    """The updates an event gives (none for those the session handles itself: questions,
    the run's start and end, steps, sub-agents' inner events)."""
    match event:
        case TextDelta(text=text) if text:
            return [AgentMessageChunk(session_update="agent_message_chunk", content=_text(text))]
        case ReasoningDelta(text=text) if text:
            return [AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(text))]
        case ToolStart():
            return [tool_start(event, root)]
        case ToolEnd():
            return [tool_end(event, root)]
        case ToolProgress(call_id=call_id, message=message) if message:
            return [ToolCallProgress(
                session_update="tool_call_update", tool_call_id=call_id, status="in_progress",
                content=[ContentToolCallContent(type="content", content=_text(message))])]
        case TodoUpdated(todos=todos):
            return [AgentPlanUpdate(session_update="plan", entries=[
                PlanEntry(content=t.get("content", ""), priority="medium",
                          status=_PLAN_STATUS.get(t.get("status", ""), "pending"))
                for t in todos])]
        case PlanProposed(steps=steps):
            return [AgentPlanUpdate(session_update="plan", entries=[
                PlanEntry(content=step, priority="medium", status="pending") for step in steps])]
        case Notice():
            return [AgentMessageChunk(session_update="agent_message_chunk",
                                      content=_text(notice_text(event)))]
        case _:
            return []
