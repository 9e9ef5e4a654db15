"""The system prompt, built in order from files and functions:

    base prompt (base.txt) -> environment -> project instructions (AGENTS.md and what it
    points to) -> framework knowledge (a pack's primer, `knowledge`) -> skills (name and
    description; the skill tool loads a body)

Tool definitions travel as the request's tool list. Instructions found in subfolders are
added by the read tool when the agent reads a file there.
"""

from __future__ import annotations

import datetime
import re
import sys
from collections.abc import Collection
from pathlib import Path

__all__ = ["build_system_prompt", "project_instructions"]

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTION_CHARS = 20_000
_POINTER = re.compile(r"(?:^|\s)@([\w./-]+\.md)\b|\]\(([\w./-]+\.md)\)")


def base_prompt() -> str:
    # a plain path, not importlib.resources: that import alone costs ~10 ms at start-up
    return (Path(__file__).parent / "base.txt").read_text(encoding="utf-8").strip()


def environment(root: Path) -> str:
    git = "yes" if (root / ".git").exists() else "no"
    return (
        "<env>\n"
        f"working directory: {root}\n"
        f"platform: {sys.platform}\n"
        f"date: {datetime.date.today().isoformat()}\n"
        f"git repository: {git}\n"
        "</env>"
    )


def _inside(root: Path, path: Path) -> bool:
    real = path.resolve()
    return real == root or root in real.parents


def project_instructions(root: Path) -> str:
    """The root's AGENTS.md (or CLAUDE.md), then the project files it points to."""
    root = root.resolve()
    main = next((root / n for n in INSTRUCTION_FILES if (root / n).is_file()), None)
    if main is None:
        return ""
    text = main.read_text(encoding="utf-8", errors="replace")
    sections = [f"Instructions from {main.name}:\n{text.strip()}"]
    seen = {main.resolve()}
    for match in _POINTER.finditer(text):
        target = (root / (match.group(1) or match.group(2))).resolve()
        if target in seen or not target.is_file() or not _inside(root, target):
            continue
        seen.add(target)
        body = target.read_text(encoding="utf-8", errors="replace").strip()
        sections.append(f"Instructions from {target.relative_to(root)}:\n{body}")
    joined = "\n\n".join(sections)
    if len(joined) > MAX_INSTRUCTION_CHARS:
        joined = joined[:MAX_INSTRUCTION_CHARS] + "\n[... instructions truncated ...]"
    return joined


def skills_section(root: Path, *, hidden: Collection[str] = ()) -> str:
    """The skills' names and descriptions; built-in skills named in `hidden` left out."""
    from totem.skills import load_skills, skills_prompt

    found = load_skills(root)
    return skills_prompt({n: s for n, s in found.items()
                          if n not in hidden or s.source == "project"})


def build_system_prompt(
    root: Path, *, skills: bool = True, knowledge: str = "", hidden_skills: Collection[str] = ()
) -> str:
    parts = [base_prompt(), environment(root), project_instructions(root), knowledge.strip()]
    if skills:
        parts.append(skills_section(root, hidden=hidden_skills))
    return "\n\n".join(p for p in parts if p)


def build_agent_prompt(
    root: Path, prompt: str, *, skills: bool, knowledge: str = "",
    hidden_skills: Collection[str] = (),
) -> str:
    """A custom or sub-agent's system prompt: its own text in place of the base prompt."""
    parts = [prompt.strip(), environment(root), project_instructions(root), knowledge.strip()]
    if skills:
        parts.append(skills_section(root, hidden=hidden_skills))
    return "\n\n".join(p for p in parts if p)
