"""The JSON-RPC messages of an ACP session, trimmed, as Markdown (docs/acp-transcript.md).

The test writes it beside its files; with TOTEM_ACP_TRANSCRIPT=PATH it is written there too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["write_transcript"]

_LONG = 240


def _trim(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= _LONG else value[:_LONG] + f"... ({len(value)} chars)"
    if isinstance(value, dict):
        return {k: _trim(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_trim(v) for v in value]
    return value


def _chunk_run(message: dict[str, Any]) -> str | None:
    """The kind of a streamed chunk notification, to fold a run of them into one line."""
    if message.get("method") != "session/update":
        return None
    kind = message.get("params", {}).get("update", {}).get("sessionUpdate")
    return kind if kind in ("agent_message_chunk", "agent_thought_chunk") else None


Message = tuple[str, dict[str, Any]]


def write_transcript(processes: list[list[Message]], path: Path, *, root: Path) -> None:
    """The messages of each editor process in turn; the project folder is shown as
    /path/to/project."""
    lines = ["# An ACP session with `totem acp`, as the editor saw it", "",
             "Recorded by `tests/acp/test_acp_session.py::test_a_whole_session_in_an_editor`: "
             "the ACP SDK's client side drives `totem acp` (a separate process) against the "
             "package's fake model server: a read, an edit allowed once, a command rejected "
             "for good (a deny rule), a cancel mid-answer, then a second editor process that "
             "lists, loads (replays) and goes on with the session.", "",
             "`→` is editor to agent, `←` agent to editor; long strings are cut and runs of "
             "streamed chunks are folded into one line.", ""]
    for number, messages in enumerate(processes, 1):
        lines.extend([f"## Editor process {number}", "", "```", *_lines(messages), "```", ""])
    text = "\n".join(lines).replace(str(root), "/path/to/project")
    path.write_text(text, encoding="utf-8")
    wanted = os.environ.get("TOTEM_ACP_TRANSCRIPT")
    if wanted:
        Path(wanted).write_text(text, encoding="utf-8")


def _lines(messages: list[Message]) -> list[str]:
    lines: list[str] = []
    folded: tuple[str, str, int] | None = None
    for direction, message in messages:
        arrow = "→" if direction == "outgoing" else "←"
        kind = _chunk_run(message)
        if kind is not None:
            text = message["params"]["update"]["content"].get("text", "")
            if folded and folded[0] == kind:
                folded = (kind, folded[1] + text, folded[2] + 1)
            else:
                if folded:
                    lines.append(_folded(folded))
                folded = (kind, text, 1)
            continue
        if folded:
            lines.append(_folded(folded))
            folded = None
        lines.append(f"{arrow} {json.dumps(_trim(message), ensure_ascii=False)}")
    if folded:
        lines.append(_folded(folded))
    return lines


def _folded(run: tuple[str, str, int]) -> str:
    kind, text, count = run
    return f"← session/update {kind} ×{count}: {json.dumps(_trim(text), ensure_ascii=False)}"
