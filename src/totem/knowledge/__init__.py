"""Framework knowledge: what totem knows of a framework, as packs of data and functions.

A pack is a folder of data (a primer, words, rules, the declaration of a documentation server)
and a few functions; the loop knows nothing of it. The session asks the packs:

    detect(root, settings) -> bool           is this project one of the pack's? (cheap: stats)
    primer() -> str                          text for the system prompt, after the instructions
    plan(prompt) -> Query | None             what to look up before the first step, if anything
    prestep(query, docs, pages, chars)       the search itself, through the documentation server
    checks(root, settings) / check(path, text) -> list[Finding]    after write, edit and patch

Built in: `totaljs` (Total.js 5 and jComponent 20, the default for new folders).

    base.py       the types: Pack, Docs, Query, Page, Pages, Finding
    docs.py       a documentation server's search and pages (MCP tools), the prompt section
    session.py    ProjectKnowledge: one session's pack, primer, documentation server, pages
    totaljs/      the Total.js pack

Importing this package loads nothing of the MCP SDK; `conventions_hook` is the after-write
hook the session gives the file tools.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from totem.settings.config import KnowledgeSettings

if TYPE_CHECKING:  # the types load when first used, not at start-up
    from totem.knowledge.base import Docs, DocsError, Finding, Pack, Page, Pages, Query
    from totem.tools.base import AfterWrite, ToolContext

__all__ = [
    "Docs",
    "DocsError",
    "Finding",
    "Pack",
    "Page",
    "Pages",
    "Query",
    "active_pack",
    "conventions_hook",
    "packs",
]

MAX_LINES_SHOWN = 8  # line numbers listed per rule in a tool result


def packs() -> list[Pack]:
    """Every pack, in the order they are asked."""
    from totem.knowledge.totaljs import TOTALJS

    return [TOTALJS]


def active_pack(root: Path, settings: KnowledgeSettings) -> Pack | None:
    """The first pack whose kind of project `root` is, or None."""
    return next((pack for pack in packs() if pack.detect(root, settings)), None)


def conventions_hook(settings: Callable[[], KnowledgeSettings]) -> AfterWrite:
    """The after-write hook of the packs (`tools.hooks`): what a pack's check says of a file
    that write, edit or patch just produced, under the session's `settings()`."""

    def check_written(ctx: ToolContext, path: Path) -> str:
        root = Path(ctx.root).resolve()
        try:
            relative = path.resolve().relative_to(root)
        except ValueError:  # outside the project: not the project's code
            return ""
        current = settings()
        for pack in packs():
            if not pack.wants(relative) or not pack.checks(root, current):
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):  # gone (deleted by a patch) or not text
                return ""
            return format_findings(ctx.relative(path), pack.check(relative, text), pack.title)
        return ""

    return check_written


def __getattr__(name: str) -> Any:
    if name in ("Docs", "DocsError", "Finding", "Pack", "Page", "Pages", "Query"):
        from totem.knowledge import base

        return getattr(base, name)
    raise AttributeError(f"module 'totem.knowledge' has no attribute {name!r}")


def format_findings(shown: str, findings: list[Finding], title: str) -> str:
    """Findings grouped by rule, with the lines where each was seen; "" when there are none."""
    if not findings:
        return ""
    lines: dict[str, list[int]] = {}
    messages: dict[str, str] = {}
    for finding in sorted(findings, key=lambda f: f.line):
        lines.setdefault(finding.rule, []).append(finding.line)
        messages.setdefault(finding.rule, finding.message)
    out = [f"\n\n{title} conventions check of {shown}: {len(findings)} "
           f"finding{'' if len(findings) == 1 else 's'}. Correct them:"]
    for rule, numbers in lines.items():
        unique = list(dict.fromkeys(n for n in numbers if n > 0))
        where = ", ".join(str(n) for n in unique[:MAX_LINES_SHOWN])
        if len(unique) > MAX_LINES_SHOWN:
            where += f" (and {len(unique) - MAX_LINES_SHOWN} more)"
        prefix = f"line{'s' if len(unique) > 1 else ''} {where}: " if unique else ""
        out.append(f"- {prefix}{messages[rule]} [{rule}]")
    return "\n".join(out)
