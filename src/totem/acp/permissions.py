"""A permission question as `session/request_permission`; the editor's choice as totem's reply.

The four ACP options map onto totem's replies: allow once, allow always (stores the narrow
rules the question carries, as the terminal's "always" does: `policy/bash_rules.py`), reject
once, reject always (stores a deny rule for exactly what was asked). A cancelled request
(the prompt was cancelled) is a rejection; the run is being stopped anyway.
"""

from __future__ import annotations

from pathlib import Path

from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from totem.acp.updates import diff_contents, tool_kind
from totem.events import PermissionAsked
from totem.policy.bash_rules import exact_pattern
from totem.policy.permission import PermissionService, Reply, Rule

__all__ = ["ask_editor", "options_for", "reply_for"]


def _shown(patterns: list[str]) -> str:
    text = ", ".join(patterns)
    return text if len(text) <= 80 else text[:80] + "..."


def options_for(event: PermissionAsked) -> list[PermissionOption]:
    """Allow once, allow always (when there is a rule to store), reject, reject always."""
    found = [PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once")]
    if event.always:  # a command run by xargs gets none: it is asked about each time
        found.append(PermissionOption(
            option_id="allow_always", kind="allow_always",
            name=f"Always allow {event.permission} {_shown(event.always)}"))
    found.append(PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"))
    found.append(PermissionOption(
        option_id="reject_always", kind="reject_always",
        name=f"Always reject {event.permission} {_shown(event.patterns)}"))
    return found


def reply_for(response: RequestPermissionResponse, event: PermissionAsked,
              permission: PermissionService) -> Reply:
    """totem's reply to the question; "reject always" also stores the deny rules."""
    outcome = response.outcome
    if not isinstance(outcome, AllowedOutcome):
        return Reply("reject", "The request was cancelled.")
    match outcome.option_id:
        case "allow_once":
            return Reply("once")
        case "allow_always":
            return Reply("always")
        case "reject_always":
            for pattern in event.patterns:
                permission.remember(Rule(event.permission, exact_pattern(pattern), "deny"))
            return Reply("reject")
        case _:
            return Reply("reject")


async def ask_editor(
    client: Client, event: PermissionAsked, *, session_id: str, call_id: str,
    root: Path, permission: PermissionService,
) -> Reply:
    """Ask the editor about `event`, shown on the tool call `call_id` with its diff."""
    tool_call = ToolCallUpdate(
        tool_call_id=call_id, title=event.title, kind=tool_kind(event.tool),
        content=list(diff_contents(event.diff, root)) or None if event.diff else None,
        raw_input={"permission": event.permission, "patterns": event.patterns},
    )
    response = await client.request_permission(
        options=options_for(event), session_id=session_id, tool_call=tool_call)
    return reply_for(response, event, permission)
