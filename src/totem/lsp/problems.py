"""A language server's diagnostics as totem reads them: the new errors, worst first, in a few lines.

An edit is judged by what it brought: an error that the file had before the change (or at the
previous check) is not repeated. Errors are matched by their text, not their place, so lines
moved by the edit do not make old errors look new.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_SHOWN", "Problem", "errors_of", "new_problems", "problem_of", "report",
           "report_left"]

MAX_SHOWN = 5  # lines of problems a result gets
MAX_MESSAGE = 200  # characters kept of one message
_SEVERITY = {1: "error", 2: "warning", 3: "info", 4: "hint"}


@dataclass(frozen=True, slots=True)
class Problem:
    line: int  # 1-based
    column: int  # 1-based
    severity: int  # LSP's: 1 error, 2 warning, 3 information, 4 hint
    message: str
    code: str = ""

    @property
    def key(self) -> tuple[int, str, str]:
        """What an old and a new problem share when they are the same one."""
        return (self.severity, self.message, self.code)

    def line_text(self) -> str:
        code = f" [{self.code}]" if self.code else ""
        kind = _SEVERITY.get(self.severity, "problem")
        return f"line {self.line}: {kind}: {self.message}{code}"


def problem_of(diagnostic: Any) -> Problem:
    """A Problem from an lsprotocol `Diagnostic` (the first line of its message, shortened)."""
    start = diagnostic.range.start
    lines = str(diagnostic.message or "").splitlines()
    message = " ".join(lines[0].split()) if lines else ""
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 1] + "…"
    severity = int(diagnostic.severity) if diagnostic.severity is not None else 1
    code = "" if diagnostic.code is None else str(diagnostic.code)
    return Problem(start.line + 1, start.character + 1, severity, message, code)


def errors_of(problems: Iterable[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == 1]


def new_problems(before: Sequence[Problem], after: Sequence[Problem]) -> list[Problem]:
    """The problems of `after` that `before` did not have (as many times as they are more)."""
    left = Counter(p.key for p in before)
    found: list[Problem] = []
    for problem in after:
        if left[problem.key] > 0:
            left[problem.key] -= 1
        else:
            found.append(problem)
    return found


def report(relative: str, server: str, new: Sequence[Problem], *, total: int) -> str:
    """The lines for the model and the person: the new errors, worst and first first."""
    shown = sorted(new, key=lambda p: (p.severity, p.line, p.column))[:MAX_SHOWN]
    count = f"{len(new)} new error{'' if len(new) == 1 else 's'}"
    older = total - len(new)
    if older > 0:
        count += f" ({older} older one{'' if older == 1 else 's'} not shown)"
    lines = [f"{relative}: {count}, from {server}:"]
    lines += [f"  {p.line_text()}" for p in shown]
    if len(new) > len(shown):
        lines.append(f"  ... and {len(new) - len(shown)} more")
    return "\n".join(lines)


def report_left(relative: str, server: str, left: Sequence[Problem], *, fixed: int) -> str:
    """The lines after a fix that left errors behind: how many went, and those still there."""
    shown = sorted(left, key=lambda p: (p.line, p.column))[:MAX_SHOWN]
    gone = f"{fixed} error{'' if fixed == 1 else 's'} fixed"
    still = f"{len(left)} left"
    lines = [f"{relative}: {gone}, {still}, from {server}:"]
    lines += [f"  {p.line_text()}" for p in shown]
    if len(left) > len(shown):
        lines.append(f"  ... and {len(left) - len(shown)} more")
    return "\n".join(lines)
