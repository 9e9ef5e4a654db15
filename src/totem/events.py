"""The one event union every client consumes: the terminal chat, `totem run`, JSON output.

The loop emits these; clients render them and answer questions through the session.
`event_to_dict` gives the JSON form printed by `totem run --format json`, one per line.
Events carry display-safe text only (images appear as `[image]`), and never a secret.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, TypeAlias

from totem.messages import Usage

__all__ = [
    "AgentEvent",
    "Event",
    "FinishReason",
    "Notice",
    "PermissionAsked",
    "PlanProposed",
    "QuestionAsked",
    "ReasoningDelta",
    "RunFinished",
    "RunStarted",
    "StepFinished",
    "TextDelta",
    "TodoUpdated",
    "ToolEnd",
    "ToolProgress",
    "ToolStart",
    "event_to_dict",
]

FinishReason: TypeAlias = Literal[
    "finished",  # the model answered without asking for tools
    "step_limit",  # maxsteps or the round limit was reached
    "repeat",  # the model kept repeating the same call with the same result
    "rejected",  # three rejected or denied actions in a row
    "aborted",  # the person stopped the run
    "error",  # the provider failed for good (auth, invalid request, retries exhausted)
    "unverified",  # the answer claims a change, but the session made none
    "truncated",  # the answer still reached the output limit after the continuations
]


@dataclass(slots=True)
class RunStarted:
    session_id: str
    message_id: str
    model: str
    type: Literal["run_started"] = "run_started"


@dataclass(slots=True)
class TextDelta:
    text: str
    type: Literal["text"] = "text"


@dataclass(slots=True)
class ReasoningDelta:
    text: str
    type: Literal["reasoning"] = "reasoning"


@dataclass(slots=True)
class ToolStart:
    call_id: str
    name: str
    input: dict[str, Any] | None
    from_text: bool = False
    type: Literal["tool_start"] = "tool_start"


@dataclass(slots=True)
class ToolEnd:
    call_id: str
    name: str
    output: str  # display-safe
    is_error: bool
    title: str = ""
    diff: str = ""  # what the call changed (a file tool, a command), as a unified diff
    diagnostics: str = ""  # a language server's new errors in the changed files (totem.lsp)
    type: Literal["tool_end"] = "tool_end"


@dataclass(slots=True)
class PermissionAsked:
    request_id: str
    tool: str
    permission: str
    patterns: list[str]
    title: str
    always: list[str] = field(default_factory=list)  # the rules an "always" reply would store
    diff: str = ""  # the unified diff of a file change asked for (write, edit, patch)
    type: Literal["permission"] = "permission"


@dataclass(slots=True)
class QuestionAsked:
    """The agent (ask tool, an MCP server's elicitation) asks the person; the run waits."""

    request_id: str
    question: str
    options: list[str]
    allow_free: bool = True
    type: Literal["question"] = "question"


@dataclass(slots=True)
class ToolProgress:
    """A running tool reports progress (an MCP server's notifications, a long command)."""

    call_id: str
    name: str
    message: str = ""
    progress: float | None = None
    total: float | None = None
    type: Literal["tool_progress"] = "tool_progress"


@dataclass(slots=True)
class AgentEvent:
    """An event of a sub-agent's run, shown in its thread above the answer."""

    call_id: str  # the task call that started the sub-agent
    agent: str
    model: str
    event: Event
    type: Literal["agent"] = "agent"


@dataclass(slots=True)
class TodoUpdated:
    """The visible task list changed: items of {content, status: pending|in_progress|done}."""

    todos: list[dict[str, str]]
    type: Literal["todo"] = "todo"


@dataclass(slots=True)
class StepFinished:
    step: int
    finish: str
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None  # USD, when the model's price is known
    cache_expires: float | None = None  # when the prompt cache written/read expires (epoch s)
    type: Literal["step_finished"] = "step_finished"


@dataclass(slots=True)
class Notice:
    text: str
    level: Literal["info", "warning", "error"] = "info"
    type: Literal["notice"] = "notice"


@dataclass(slots=True)
class PlanProposed:
    """A plan-mode run ended with this plan: the person approves it (the session goes on
    in the default mode with `steps` as its task list), edits it, or keeps planning."""

    text: str
    steps: list[str]
    type: Literal["plan"] = "plan"


@dataclass(slots=True)
class RunFinished:
    reason: FinishReason
    detail: str = ""
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None  # USD for the run, when the model's price is known
    type: Literal["run_finished"] = "run_finished"


Event: TypeAlias = (
    RunStarted
    | TextDelta
    | ReasoningDelta
    | ToolStart
    | ToolEnd
    | PermissionAsked
    | QuestionAsked
    | ToolProgress
    | TodoUpdated
    | AgentEvent
    | StepFinished
    | Notice
    | PlanProposed
    | RunFinished
)


def event_to_dict(event: Event) -> dict[str, Any]:
    return asdict(event)
