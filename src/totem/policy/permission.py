"""Permission: rules `(permission, pattern, action)`, last match wins; questions for the rest.

A tool asks inside its own `run` with the patterns it touches (paths, each command of a bash
line). Rules come from the defaults, the config, and replies "always" remembered in the store
for the project. What no rule allows is asked: in the terminal or the page the run waits for
the person's reply; with `--yes` it is allowed; in a headless run with nobody to ask it is
denied, and the denial says so. Rejections go back to the model as the tool's result.
"""

from __future__ import annotations

import asyncio
import copy
import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias

from totem.events import Event, PermissionAsked
from totem.messages import new_id
from totem.settings.rules import Action, Rule

__all__ = [
    "DEFAULT_RULES",
    "NOT_BY_YES",
    "Action",
    "Mode",
    "PermissionDenied",
    "PermissionService",
    "Reply",
    "Rule",
    "evaluate",
    "matches",
]

Mode: TypeAlias = Literal["interactive", "yes", "headless"]
ReplyKind: TypeAlias = Literal["once", "always", "reject"]


@dataclass(frozen=True, slots=True)
class Reply:
    kind: ReplyKind
    message: str = ""  # with "reject": feedback for the model


# Questions `--yes` does not answer: only a rule or the person (in a terminal, on the page) do.
NOT_BY_YES = frozenset({"unsandboxed"})

DEFAULT_RULES: tuple[Rule, ...] = (
    Rule("*", "*", "ask"),
    Rule("read", "*", "allow"),
    Rule("glob", "*", "allow"),
    Rule("grep", "*", "allow"),
    Rule("external_directory", "*", "deny"),
)


class PermissionDenied(Exception):
    """The action was refused: by a rule, by the person, or for want of anyone to ask."""

    def __init__(self, message: str, *, by_user: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.by_user = by_user


class RuleMemory(Protocol):
    def remembered_rules(self, project: str) -> list[Rule]: ...

    def remember_rule(self, project: str, rule: Rule) -> None: ...


def matches(pattern: str, rule_pattern: str) -> bool:
    """fnmatch, and `git status *` also matches a bare `git status`."""
    if fnmatch.fnmatchcase(pattern, rule_pattern):
        return True
    return rule_pattern.endswith(" *") and pattern == rule_pattern[:-2]


def evaluate(rules: Iterable[Rule], permission: str, pattern: str) -> Action:
    """The action of the last rule that matches both the permission and the pattern."""
    action: Action = "ask"
    for rule in rules:
        if fnmatch.fnmatchcase(permission, rule.permission) and matches(pattern, rule.pattern):
            action = rule.action
    return action


class PermissionService:
    def __init__(
        self,
        *,
        rules: Iterable[Rule],
        mode: Mode,
        project: str,
        memory: RuleMemory | None = None,
        emit: Callable[[Event], None] | None = None,
    ) -> None:
        self.rules = [*DEFAULT_RULES, *rules]
        self.mode: Mode = mode
        self.project = project
        self.memory = memory
        self.emit = emit
        self._remembered = memory.remembered_rules(project) if memory else []
        self._pending: dict[str, asyncio.Future[Reply]] = {}
        # A session mode's bounds (policy/modes.py): permissions outside `only` are denied
        # with `only_reason`; those in `free` need no question.
        self.only: frozenset[str] | None = None
        self.only_reason = ""
        self.free: frozenset[str] = frozenset()
        # whether a person answers the questions `--yes` leaves (a terminal, the page)
        self.person = mode == "interactive"

    def bounded(self, *, only: frozenset[str] | None, reason: str = "",
                free: frozenset[str] = frozenset()) -> PermissionService:
        """This service within a mode's bounds; rules, remembered replies and pending
        questions are shared with it (a reply given to either reaches the question)."""
        bounded = copy.copy(self)
        bounded.only, bounded.only_reason, bounded.free = only, reason, free
        return bounded

    def action_for(self, permission: str, pattern: str) -> Action:
        return evaluate([*self.rules, *self._remembered], permission, pattern)

    async def ask(
        self,
        *,
        tool: str,
        permission: str,
        patterns: list[str],
        title: str,
        always: list[str] | None = None,
        emit: Callable[[Event], None] | None = None,
        diff: str = "",
    ) -> None:
        """Return when allowed; raise PermissionDenied otherwise. The question goes to
        `emit` (the run's event sink), or to the service's own when none is given."""
        if self.only is not None and permission not in self.only:
            raise PermissionDenied(self.only_reason or f"{tool} is not allowed in this mode.")
        actions = [self.action_for(permission, p) for p in patterns] or ["ask"]
        for pattern, action in zip(patterns, actions, strict=False):
            if action == "deny":
                raise PermissionDenied(
                    f"{tool} was denied by a permission rule ({permission}: {pattern})."
                )
        if all(a == "allow" for a in actions) or permission in self.free:
            return
        if self.mode == "yes" and permission not in NOT_BY_YES:
            return
        sink = emit if emit is not None else self.emit
        if permission in NOT_BY_YES and not self.person:
            raise PermissionDenied(
                f"{tool} needs the person's approval to run outside the sandbox ({title}), and "
                "nobody can give it here: --yes answers the ordinary questions only. Run the "
                "command inside the sandbox, or the person allows it with a rule (permission "
                "unsandboxed), in a terminal, or with --sandbox off."
            )
        if self.mode == "headless" or sink is None:
            raise PermissionDenied(
                f"{tool} needs permission ({title}) and nobody can answer: this run has no "
                "terminal. Run it in a terminal, pass --yes, or allow it with a rule."
            )
        request_id = new_id("perm")
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        sink(
            PermissionAsked(
                request_id=request_id,
                tool=tool,
                permission=permission,
                patterns=patterns,
                title=title,
                always=list(patterns if always is None else always),
                diff=diff,
            )
        )
        try:
            reply = await future
        finally:
            self._pending.pop(request_id, None)
        if reply.kind == "reject":
            feedback = f" The user said: {reply.message}" if reply.message else ""
            raise PermissionDenied(f"The user rejected {tool} ({title}).{feedback}", by_user=True)
        if reply.kind == "always":
            for pattern in patterns if always is None else always:
                self.remember(Rule(permission, pattern, "allow"))

    def remember(self, rule: Rule) -> None:
        """Keep `rule` for this project, in the store too (an "always" reply; a client's
        "reject always" stores a deny rule this way)."""
        self._remembered.append(rule)
        if self.memory:
            self.memory.remember_rule(self.project, rule)

    def reply(self, request_id: str, reply: Reply) -> bool:
        future = self._pending.get(request_id)
        if future is None or future.done():
            return False
        future.set_result(reply)
        return True

    def pending(self) -> list[str]:
        return list(self._pending)
