"""A unified diff in the terminal: added lines green, removed red, cut past a screenful."""

from __future__ import annotations

__all__ = ["diff_lines", "SCREEN_LINES"]

SCREEN_LINES = 40


def _colour(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "1"
    if line.startswith("+"):
        return "32"
    if line.startswith("-"):
        return "31"
    if line.startswith("@@"):
        return "36"
    return ""


def diff_lines(
    diff: str, *, tty: bool, limit: int = SCREEN_LINES, indent: str = "    "
) -> list[str]:
    """The lines to print for `diff`: coloured on a terminal, at most `limit`, then a count."""
    lines = diff.rstrip("\n").splitlines()
    shown = lines[:limit]
    out = []
    for line in shown:
        code = _colour(line)
        out.append(indent + (f"\033[{code}m{line}\033[0m" if tty and code else line))
    if len(lines) > limit:
        rest = len(lines) - limit
        out.append(f"{indent}… {rest} more line{'s' * (rest != 1)} of the diff")
    return out
