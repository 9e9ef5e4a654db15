"""The `hooks:` section of a config file, as Claude Code users write it (in totem's names):

    hooks:
      pre_tool:
        - {matcher: "bash", command: "~/bin/check.sh", timeout: 60}
        - {matcher: "edit|write", command: "ruff check --quiet ."}
      stop:
        - {command: "~/bin/tests-pass.sh"}

The events are those of `HOOK_EVENTS`. `matcher` (tool events only) is a tool name or a glob
over names (`mcp__*`), several separated by `|`, compared without regard to case (so
Claude Code's `Bash` or `Edit|Write` carry over); no matcher, or `*`, is every tool.
`timeout` is in seconds (default 60). Unknown keys are refused by settings/config_schema.py.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from totem.settings.errors import ConfigError

__all__ = ["CLAUDE_NAMES", "DEFAULT_TIMEOUT", "HOOK_EVENTS", "HookEvent", "HookSpec",
           "parse_hooks"]

HookEvent: TypeAlias = Literal[
    "session_start", "user_prompt", "pre_tool", "post_tool", "stop", "notification"
]
HOOK_EVENTS: tuple[HookEvent, ...] = (
    "session_start", "user_prompt", "pre_tool", "post_tool", "stop", "notification"
)
# The name a Claude Code hook reads in `hook_event_name`, so its scripts carry over.
CLAUDE_NAMES: dict[HookEvent, str] = {
    "session_start": "SessionStart", "user_prompt": "UserPromptSubmit",
    "pre_tool": "PreToolUse", "post_tool": "PostToolUse", "stop": "Stop",
    "notification": "Notification",
}
TOOL_EVENTS = frozenset({"pre_tool", "post_tool"})
DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One hook: on `event`, for the tools `matcher` names, run `command` (a shell line)."""

    event: HookEvent
    command: str
    matcher: str = ""  # "" or "*": every tool
    timeout: float = DEFAULT_TIMEOUT
    source: Literal["user", "project"] = "user"

    def matches(self, tool: str | None) -> bool:
        """Whether the hook is for `tool` (None: an event of no tool, which every hook of
        that event gets)."""
        if tool is None or self.matcher.strip() in ("", "*"):
            return True
        name = tool.lower()
        return any(fnmatch.fnmatchcase(name, pattern.strip().lower())
                   for pattern in self.matcher.split("|") if pattern.strip())


def _event(name: str) -> HookEvent:
    for event in HOOK_EVENTS:
        if event == name:
            return event
    known = ", ".join(HOOK_EVENTS)
    raise ConfigError(f"hooks.{name}: not an event (events: {known})")


def parse_hooks(section: Any, *, source: Literal["user", "project"] = "user") -> list[HookSpec]:
    """The hooks of a (schema-checked) `hooks:` mapping, in the order written."""
    if not section:
        return []
    if not isinstance(section, dict):
        raise ConfigError("hooks: expected a mapping of events to lists of hooks")
    found: list[HookSpec] = []
    for name, items in section.items():
        event = _event(str(name))
        for index, item in enumerate(items or []):
            where = f"hooks.{name}[{index}]"
            command = str(item.get("command") or "").strip()
            if not command:
                raise ConfigError(f"{where}: needs a command")
            if item.get("matcher") and event not in TOOL_EVENTS:
                raise ConfigError(f"{where}: a matcher is for pre_tool and post_tool only")
            timeout = item.get("timeout", DEFAULT_TIMEOUT)
            if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
                raise ConfigError(f"{where}: timeout must be a number of seconds above 0")
            found.append(HookSpec(event, command, str(item.get("matcher") or ""),
                                  float(timeout), item.get("_source", source)))
    return found
