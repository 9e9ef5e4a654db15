"""`Hooks`: the person's hooks of a session, run on its events.

Each method builds the event's JSON (Claude Code's field names: session_id, cwd,
hook_event_name, permission_mode, tool_name, tool_input, tool_response, prompt, ...), runs
every hook of the event that matches, side by side, and joins what they say: blocked when
one blocks (their reasons together), their context together, and what is to be shown.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from totem.hooks.process import run_hook
from totem.hooks.verdict import HookVerdict, verdict
from totem.settings.hooks import CLAUDE_NAMES, HookEvent, HookSpec

__all__ = ["HookOutcome", "Hooks"]


@dataclass(slots=True)
class HookOutcome:
    blocked: bool = False
    reason: str = ""
    context: str = ""
    shown: list[str] = field(default_factory=list)


def _joined(verdicts: list[HookVerdict]) -> HookOutcome:
    blocking = [v for v in verdicts if v.blocked]
    return HookOutcome(
        blocked=bool(blocking),
        reason="\n".join(v.reason for v in blocking if v.reason),
        context="\n\n".join(v.context for v in verdicts if v.context),
        shown=[v.shown for v in verdicts if v.shown],
    )


class Hooks:
    """The hooks of one session service (the user's, and a trusted project's)."""

    def __init__(self, specs: list[HookSpec], *, root: Path) -> None:
        self.specs = list(specs)
        self.root = root
        self.started: set[str] = set()  # sessions whose session_start has run

    def __bool__(self) -> bool:
        return bool(self.specs)

    def of(self, event: HookEvent, tool: str | None = None) -> list[HookSpec]:
        return [s for s in self.specs if s.event == event and s.matches(tool)]

    async def fire(
        self, event: HookEvent, session_id: str, fields: dict[str, Any], *,
        tool: str | None = None, mode: str = "default",
    ) -> HookOutcome:
        """Run the hooks of `event` (for `tool`) with the event's JSON; what they say."""
        chosen = self.of(event, tool)
        if not chosen:
            return HookOutcome()
        payload = {"session_id": session_id, "cwd": str(self.root),
                   "hook_event_name": CLAUDE_NAMES[event], "event": event,
                   "permission_mode": mode, **fields}
        runs = await asyncio.gather(*(run_hook(s.command, payload, cwd=self.root,
                                               timeout=s.timeout) for s in chosen))
        return _joined([verdict(s, r) for s, r in zip(chosen, runs, strict=True)])

    async def session_start(self, session_id: str, *, resumed: bool,
                            mode: str = "default") -> HookOutcome:
        """session_start, once per session in this service."""
        if session_id in self.started:
            return HookOutcome()
        self.started.add(session_id)
        return await self.fire("session_start", session_id,
                               {"source": "resume" if resumed else "startup"}, mode=mode)

    async def user_prompt(self, session_id: str, prompt: str, *,
                          mode: str = "default") -> HookOutcome:
        return await self.fire("user_prompt", session_id, {"prompt": prompt}, mode=mode)

    async def pre_tool(self, session_id: str, *, name: str, args: dict[str, Any],
                       call_id: str, mode: str = "default") -> HookOutcome:
        return await self.fire("pre_tool", session_id, {
            "tool_name": name, "tool_input": args, "tool_use_id": call_id}, tool=name, mode=mode)

    async def post_tool(self, session_id: str, *, name: str, args: dict[str, Any],
                        call_id: str, output: str, error: bool,
                        mode: str = "default") -> HookOutcome:
        return await self.fire("post_tool", session_id, {
            "tool_name": name, "tool_input": args, "tool_use_id": call_id,
            "tool_response": {"output": output, "is_error": error}}, tool=name, mode=mode)

    async def stop(self, session_id: str, *, answer: str, active: bool,
                   mode: str = "default") -> HookOutcome:
        """`active`: this run already went back to work once for a stop hook."""
        return await self.fire("stop", session_id, {
            "stop_hook_active": active, "last_assistant_message": answer}, mode=mode)

    async def notification(self, session_id: str, *, message: str, kind: str,
                           mode: str = "default") -> HookOutcome:
        return await self.fire("notification", session_id, {
            "message": message, "notification_type": kind}, mode=mode)
