"""A plan-mode answer offered to the editor for approval.

A plan-mode run ends with its plan (`PlanProposed`); the editor is shown it as a tool call
of kind "switch_mode" that asks permission, as ACP has no plan approval of its own. Its
buttons say what happens next: carry it out asking before edits (the default mode), carry
it out making file changes without asking (accept_edits), or keep planning (the session
stays in plan mode and the person says what to change in the next prompt).
"""

from __future__ import annotations

from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    ContentToolCallContent,
    FileEditToolCallContent,
    PermissionOption,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from totem.abort import AbortSignal
from totem.events import PlanProposed
from totem.policy.modes import SessionMode

__all__ = ["PLAN_OPTIONS", "approve_in_editor", "mode_chosen"]

PLAN_OPTIONS = [
    PermissionOption(option_id="default", name="Yes, and ask before each edit",
                     kind="allow_once"),
    PermissionOption(option_id="accept_edits", name="Yes, and make the edits without asking",
                     kind="allow_always"),
    PermissionOption(option_id="plan", name="No, keep planning", kind="reject_once"),
]
_CHOSEN: dict[str, SessionMode] = {"default": "default", "accept_edits": "accept_edits"}


def _listed(plan: PlanProposed) -> str:
    return "\n".join(f"{i}. {step}" for i, step in enumerate(plan.steps, 1))


def mode_chosen(outcome: object) -> SessionMode | None:
    """The mode the plan is carried out in, or None to keep planning."""
    if isinstance(outcome, AllowedOutcome):
        return _CHOSEN.get(outcome.option_id)
    return None


async def approve_in_editor(client: Client, plan: PlanProposed, *, session_id: str,
                            call_id: str, abort: AbortSignal) -> SessionMode | None:
    """Ask the editor whether to carry out `plan`, and in which mode; None: keep planning
    (also when the request is cancelled, the prompt is, or the editor fails to answer)."""
    content: list[ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent] = [
        ContentToolCallContent(type="content",
                               content=TextContentBlock(type="text", text=_listed(plan)))]
    await client.session_update(session_id=session_id, update=ToolCallStart(
        session_update="tool_call", tool_call_id=call_id, title="Carry out the plan?",
        kind="switch_mode", status="pending", content=content))
    try:
        response = await abort.until(client.request_permission(
            options=PLAN_OPTIONS, session_id=session_id, tool_call=ToolCallUpdate(
                tool_call_id=call_id, title="Carry out the plan?", kind="switch_mode")))
        mode = mode_chosen(response.outcome)
    except Exception:  # cancelled, or the editor failed to answer: nothing changes
        mode = None
    await client.session_update(session_id=session_id, update=ToolCallProgress(
        session_update="tool_call_update", tool_call_id=call_id,
        status="completed" if mode is not None else "failed",
        title="Carrying out the plan" if mode is not None else "Still planning"))
    return mode
