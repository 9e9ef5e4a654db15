"""The person's hooks: their own commands run on the agent's events (Claude Code's contract).

    process.py   one hook run: the event as JSON on stdin, a timeout, its process group killed
    verdict.py   what a hook's exit code and output say (go on, block with a reason, context)
    dispatch.py  `Hooks`: the hooks of an event that match, run together, their verdicts joined

The `hooks:` section is read into `HookSpec`s (event, matcher, command, timeout) by
settings/hooks.py.

These are not `tools/hooks.py` (totem's own after-write checks, a knowledge pack's).
"""

from totem.hooks.dispatch import HookOutcome, Hooks
from totem.hooks.verdict import HookVerdict
from totem.settings.hooks import HOOK_EVENTS, HookEvent, HookSpec, parse_hooks

__all__ = ["HOOK_EVENTS", "HookEvent", "HookOutcome", "HookSpec", "HookVerdict", "Hooks",
           "parse_hooks"]
