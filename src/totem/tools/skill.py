"""skill: the body of a skill, with its folder so that the files it mentions can be read."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from totem.skills import Skill as SkillDef
from totem.skills import load_skills
from totem.tools.base import ToolContext, ToolError, ToolResult, truncate

__all__ = ["Skill", "SkillInput"]

MAX_FILES = 30  # other files of the skill's folder named in the result


class SkillInput(BaseModel):
    name: str = Field(description="The skill's name, as listed under Skills.")


class Skill:
    name: ClassVar[str] = "skill"
    description: ClassVar[str] = "Load the instructions of a skill listed in the system prompt."
    read_only: ClassVar[bool] = True
    Input: ClassVar[type[BaseModel]] = SkillInput

    async def run(self, args: SkillInput, ctx: ToolContext) -> ToolResult:
        skills = load_skills(Path(ctx.root))
        skill = _find(skills, args.name)
        folder = ctx.relative(skill.folder)
        lines = [
            f"Skill: {skill.name}",
            f"Folder: {folder} (paths in the skill are relative to this folder)",
        ]
        files = _other_files(skill)
        if files:
            lines.append("Files: " + ", ".join(files))
        text = "\n".join(lines) + "\n\n" + skill.body
        return ToolResult(truncate(text, ctx.settings.output_limit), title=f"skill {skill.name}")


def _find(skills: dict[str, SkillDef], wanted: str) -> SkillDef:
    name = wanted.strip().lstrip("/")
    if name in skills:
        return skills[name]
    folded = [s for key, s in skills.items() if key.lower() == name.lower()]
    if len(folded) == 1:
        return folded[0]
    if not skills:
        raise ToolError(f"There is no skill named '{wanted}': no skills are available.")
    raise ToolError(
        f"There is no skill named '{wanted}'. Available skills: {', '.join(sorted(skills))}."
    )


def _other_files(skill: SkillDef) -> list[str]:
    files = sorted(
        str(p.relative_to(skill.folder))
        for p in skill.folder.rglob("*")
        if p.is_file() and p != skill.path and not p.name.startswith(".")
    )
    if len(files) > MAX_FILES:
        return files[:MAX_FILES] + [f"... and {len(files) - MAX_FILES} more"]
    return files
