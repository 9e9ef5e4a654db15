"""Where a run meets the person's hooks (totem.hooks): before and after each tool call, and
when the model means to stop. The loop and the executor make one call at each point.

    before_tool   a pre_tool hook that blocks refuses the call: its reason is the result
    after_tool    a post_tool hook's block reason or context is added to the result
    keep_going    a stop hook that blocks sends the model back to work with its reason,
                  at most STOP_LIMIT times in a run (then the run ends as it would)

What a hook asks to show the person (a failure, a timeout) is a notice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from totem.events import Event, Notice
from totem.messages import Message, ToolPart

if TYPE_CHECKING:
    from totem.hooks import HookOutcome
    from totem.run.agent import Agent

__all__ = ["STOP_LIMIT", "StopHooks", "after_tool", "before_tool"]

STOP_LIMIT = 3  # times a run goes back to work for a stop hook


def _show(outcome: HookOutcome, emit: Callable[[Event], None]) -> None:
    for text in outcome.shown:
        emit(Notice(text, "warning"))


async def before_tool(agent: Agent, session_id: str, part: ToolPart,
                      emit: Callable[[Event], None]) -> str | None:
    """The refusal of `part` by a pre_tool hook, worded for the model; None: it may run."""
    if not agent.hooks:
        return None
    outcome = await agent.hooks.pre_tool(session_id, name=part.name, args=part.input or {},
                                         call_id=part.call_id, mode=agent.mode)
    _show(outcome, emit)
    if not outcome.blocked:
        return None
    emit(Notice(f"A pre_tool hook blocked {part.name}: {outcome.reason}", "warning"))
    return f"Blocked by a hook before it ran: {outcome.reason}"


async def after_tool(agent: Agent, session_id: str, part: ToolPart, output: str, *,
                     error: bool, emit: Callable[[Event], None]) -> str:
    """What the post_tool hooks add to the call's result ("" for nothing)."""
    if not agent.hooks:
        return ""
    outcome = await agent.hooks.post_tool(session_id, name=part.name, args=part.input or {},
                                          call_id=part.call_id, output=output, error=error,
                                          mode=agent.mode)
    _show(outcome, emit)
    said = [f"[A hook says: {outcome.reason}]" if outcome.blocked else "",
            f"[Hook context: {outcome.context}]" if outcome.context else ""]
    return "".join(f"\n\n{text}" for text in said if text)


class StopHooks:
    """A run's stop hooks: whether the model goes back to work instead of stopping."""

    def __init__(self, agent: Agent, session_id: str, *, emit: Callable[[Event], None],
                 nested: bool) -> None:
        self.agent = agent
        self.session_id = session_id
        self.emit = emit
        self.nested = nested  # a sub-agent's run: its parent's stop is the one that counts
        self.sent_back = 0

    async def keep_going(self, message: Message, add_user: Callable[[str], None]) -> bool:
        """True when a stop hook blocked: its reason was added for the model (`add_user`)."""
        hooks = self.agent.hooks
        if not hooks or self.nested or self.sent_back >= STOP_LIMIT:
            return False
        outcome = await hooks.stop(self.session_id, answer=message.text(),
                                   active=self.sent_back > 0, mode=self.agent.mode)
        _show(outcome, self.emit)
        if not outcome.blocked:
            return False
        self.sent_back += 1
        self.emit(Notice(f"A stop hook sent the model back to work: {outcome.reason}",
                         "warning"))
        add_user(f"[A stop hook says the work is not done:]\n{outcome.reason}")
        return True
