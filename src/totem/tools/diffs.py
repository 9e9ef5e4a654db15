"""Unified diffs of what a file tool is about to change: shown in the permission question and
kept on the call's part (`meta["diff"]`) so the person sees what changed.

A diff longer than `MAX_LINES` is cut, with a last line saying how many lines were left out.
"""

from __future__ import annotations

__all__ = ["MAX_LINES", "diff_stat", "file_diff", "joined"]

MAX_LINES = 400


def file_diff(relative: str, before: str | None, after: str | None, *, to: str = "") -> str:
    """The unified diff of one file (moved to `to` when given); `None` stands for no file
    (created or deleted)."""
    import difflib  # only when a file changes: not at start-up

    old = (before or "").splitlines(keepends=True)
    new = (after or "").splitlines(keepends=True)
    lines = [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
             for line in difflib.unified_diff(
                 old, new,
                 fromfile="/dev/null" if before is None else f"a/{relative}",
                 tofile="/dev/null" if after is None else f"b/{to or relative}",
             )]
    if to and not lines:
        return f"--- a/{relative}\n+++ b/{to}\n"
    return "".join(lines)


def joined(diffs: list[str]) -> str:
    """Several files' diffs as one, cut past `MAX_LINES` with a count of the rest."""
    lines = "".join(diffs).splitlines()
    if len(lines) <= MAX_LINES:
        return "\n".join(lines)
    rest = len(lines) - MAX_LINES
    return "\n".join([*lines[:MAX_LINES], f"… {rest} more diff line{'s' * (rest != 1)}"])


def diff_stat(diff: str) -> str:
    """'+3 -1' for a diff: lines added and removed."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return f"+{added} -{removed}"
