"""What a hook's ending says, by Claude Code's rules:

    exit 0   go on; stdout may be JSON: {"decision": "block", "reason": ...} blocks,
             {"continue": false, "stopReason": ...} blocks too, "additionalContext" (at the
             top or in "hookSpecificOutput") is added for the model, and
             hookSpecificOutput.permissionDecision "deny" (pre_tool) blocks with its reason.
             Plain text on stdout is context for session_start and user_prompt only.
    exit 2   block: stderr is the reason (the model reads it, or the person for a prompt)
    other    shown to the person and ignored; so is a timeout
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from totem.hooks.process import HookRun
from totem.settings.hooks import HookSpec

__all__ = ["HookVerdict", "verdict"]

PLAIN_CONTEXT = frozenset({"session_start", "user_prompt"})


@dataclass(frozen=True, slots=True)
class HookVerdict:
    blocked: bool = False
    reason: str = ""  # why it blocked, for the model (or the person)
    context: str = ""  # added for the model
    shown: str = ""  # said to the person (a failure, a timeout, output that is not JSON)


def _json(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _from_json(spec: HookSpec, data: dict[str, Any]) -> HookVerdict:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    context = data.get("additionalContext") or specific.get("additionalContext") or ""
    reason = str(data.get("reason") or data.get("stopReason") or "")
    blocked = data.get("decision") == "block" or data.get("continue") is False
    if spec.event == "pre_tool" and specific.get("permissionDecision") == "deny":
        blocked = True
        reason = str(specific.get("permissionDecisionReason") or reason)
    shown = str(data.get("systemMessage") or "")
    if blocked and not reason:
        reason = f"blocked by the hook `{spec.command}`"
    return HookVerdict(blocked, reason.strip(), str(context).strip(), shown)


def verdict(spec: HookSpec, run: HookRun) -> HookVerdict:
    """What `run`, a run of `spec`, says."""
    name = f"The {spec.event} hook `{spec.command}`"
    if run.timed_out:
        return HookVerdict(shown=f"{name} ran past its {spec.timeout:g} s and was stopped.")
    if run.code == 2:
        reason = run.stderr.strip() or f"blocked by the hook `{spec.command}`"
        return HookVerdict(blocked=True, reason=reason)
    if run.code != 0:
        said = run.stderr.strip().splitlines()
        detail = f": {said[-1][:300]}" if said else ""
        code = "could not start" if run.code is None else f"exited with {run.code}"
        return HookVerdict(shown=f"{name} {code}{detail} (ignored).")
    data = _json(run.stdout)
    if data is not None:
        return _from_json(spec, data)
    text = run.stdout.strip()
    if text.startswith("{"):
        return HookVerdict(shown=f"{name} printed output that is not valid JSON (ignored).")
    if spec.event in PLAIN_CONTEXT:
        return HookVerdict(context=text)
    return HookVerdict()
