"""Skills: instructions for a kind of task, which the model loads when it needs them.

    totem/skills/builtin/<name>/SKILL.md      built in
    <root>/.totem/skills/<name>/SKILL.md      the project's; replaces a built-in skill of
                                              the same name

SKILL.md starts with front matter (`name`, `description`); its body is what the `skill`
tool returns. The system prompt lists names and descriptions only (`skills_prompt`). A
skill is named by its folder; a different `name` in the front matter is reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from totem.agents.definitions import split_front_matter

__all__ = ["BUILTIN_DIR", "Skill", "SkillSource", "load_skills", "skills_prompt"]

SkillSource: TypeAlias = Literal["builtin", "project"]

BUILTIN_DIR = Path(__file__).parent / "builtin"
MAX_DESCRIPTION = 400  # characters of a description shown in the system prompt


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    body: str
    path: Path  # the SKILL.md file; files the body mentions are relative to its folder
    source: SkillSource

    @property
    def folder(self) -> Path:
        return self.path.parent


def _read_skill(file: Path, source: SkillSource, notes: list[str]) -> Skill:
    """A skill from its SKILL.md; ValueError or OSError when it cannot be used."""
    header, body = split_front_matter(file.read_text(encoding="utf-8"))
    name = file.parent.name
    declared = header.get("name")
    if declared is not None and str(declared).strip() != name:
        notes.append(f"its name '{declared}' differs from its folder; it is called '{name}'")
    description = header.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("the front matter has no description (the model chooses by it)")
    if not body.strip():
        raise ValueError("the body (the text after the front matter) is empty")
    return Skill(name, " ".join(description.split()), body.strip(), file, source)


def _folder_skills(
    folder: Path, source: SkillSource, problems: list[str] | None
) -> dict[str, Skill]:
    found: dict[str, Skill] = {}
    if not folder.is_dir():
        return found
    for file in sorted(folder.glob("*/SKILL.md")):
        notes: list[str] = []
        try:
            found[file.parent.name] = _read_skill(file, source, notes)
        except (OSError, ValueError) as exc:  # FrontMatterError and UnicodeDecodeError too
            notes.append(f"{exc}. It was not loaded")
        if problems is not None:
            problems.extend(f"Skill {file}: {note}." for note in notes)
    return found


def load_skills(root: Path, *, problems: list[str] | None = None) -> dict[str, Skill]:
    """Built-in skills, then the project's, which replace built-in ones of the same name.

    Problems (a malformed SKILL.md) are appended to `problems` when given, naming the file.
    """
    skills = _folder_skills(BUILTIN_DIR, "builtin", problems)
    skills.update(_folder_skills(root / ".totem" / "skills", "project", problems))
    return skills


def skills_prompt(skills: Mapping[str, Skill]) -> str:
    """The system prompt's skills section: names and descriptions; "" when there are none."""
    if not skills:
        return ""
    header = (Path(__file__).parent / "section.txt").read_text(encoding="utf-8").strip()
    lines = [header]
    for name in sorted(skills):
        description = skills[name].description
        if len(description) > MAX_DESCRIPTION:
            description = description[: MAX_DESCRIPTION - 3].rstrip() + "..."
        lines.append(f"- {name}: {description}")
    return "\n".join(lines)
