"""A stored session replayed to the editor (`session/load`): the person's messages, the
answers, the reasoning, each tool call with its end state, diff and output, and notices, as
the session updates they were when live. Synthetic turns ("Continue.") and compaction
summaries are not shown, as in the terminal.
"""

from __future__ import annotations

from pathlib import Path

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallStart,
    UserMessageChunk,
)

from totem.acp.updates import diff_contents, notice_text, tool_kind
from totem.events import Notice
from totem.messages import Message, NoticePart, ReasoningPart, TextPart, ToolPart

__all__ = ["replay"]

Replayed = UserMessageChunk | AgentMessageChunk | AgentThoughtChunk | ToolCallStart


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def _tool(part: ToolPart, root: Path) -> ToolCallStart:
    content: list[ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent]
    content = list(diff_contents(part.meta.get("diff", ""), root)) if part.meta else []
    if part.output:
        content.append(ContentToolCallContent(type="content", content=_text(part.output)))
    status = {"completed": "completed", "error": "failed"}.get(part.state, "failed")
    return ToolCallStart(
        session_update="tool_call", tool_call_id=part.call_id,
        title=part.name + (f": {part.title}" if part.title else ""), kind=tool_kind(part.name),
        status="completed" if status == "completed" else "failed", raw_input=part.input,
        content=content or None,
    )


def replay(messages: list[Message], root: Path) -> list[Replayed]:
    updates: list[Replayed] = []
    for message in messages:
        for part in message.parts:
            match part:
                case TextPart(synthetic=True):
                    continue
                case TextPart(text=text) if message.role == "user" and text:
                    updates.append(UserMessageChunk(session_update="user_message_chunk",
                                                    content=_text(text)))
                case TextPart(text=text) if text:
                    updates.append(AgentMessageChunk(session_update="agent_message_chunk",
                                                     content=_text(text)))
                case ReasoningPart(text=text) if text:
                    updates.append(AgentThoughtChunk(session_update="agent_thought_chunk",
                                                     content=_text(text)))
                case ToolPart():
                    updates.append(_tool(part, root))
                case NoticePart(text=text, level=level):
                    updates.append(AgentMessageChunk(
                        session_update="agent_message_chunk",
                        content=_text(notice_text(Notice(text, level)))))
                case _:
                    pass
    return updates
