"""The Total.js pack: Total.js 5 on the server, jComponent 20 in the browser.

    primer.txt          the short primer for the system prompt
    detect.json         what marks another kind of project; detect.py
    words.json          filler words, Spanish translations, products, recipes; query.py
    forge.json          the built-in documentation server `forge`
    conventions.json    the rules of the check after write/edit/patch; conventions.py
    ../../skills/builtin/totaljs-conventions/SKILL.md    the conventions skill
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from totem.settings.config import KnowledgeSettings

if TYPE_CHECKING:
    from totem.knowledge.base import Docs, Finding, Pages, Query

__all__ = ["TOTALJS", "TotalJs"]

HERE = Path(__file__).parent


class TotalJs:
    name: str = "totaljs"
    title: str = "Total.js"
    server: str = "forge"
    skills: tuple[str, ...] = ("totaljs-conventions",)
    search_tool: str = "Forge_search"
    page_tool: str = "Forge_page"

    def detect(self, root: Path, settings: KnowledgeSettings) -> bool:
        from totem.knowledge.totaljs.detect import detect

        return detect(root, settings)

    def primer(self) -> str:
        return _primer()

    def docs_enabled(self, settings: KnowledgeSettings) -> bool:
        return settings.forge

    def server_config(self) -> dict[str, Any]:
        spec: dict[str, Any] = json.loads((HERE / "forge.json").read_text(encoding="utf-8"))
        return dict(spec[self.server])

    def plan(self, prompt: str) -> Query | None:
        from totem.knowledge.totaljs.query import plan

        return plan(prompt)

    async def prestep(self, query: Query, docs: Docs, *, pages: int, chars: int) -> Pages:
        from totem.knowledge.docs import search

        return await search(query, docs, search_tool=self.search_tool,
                            page_tool=self.page_tool, pages=pages, chars=chars)

    def checks(self, root: Path, settings: KnowledgeSettings) -> bool:
        if not settings.conventions or settings.totaljs == "never":
            return False
        if settings.totaljs == "always":
            return True
        from totem.knowledge.totaljs.detect import depends_on_total5

        return depends_on_total5(root)

    def wants(self, path: Path) -> bool:
        from totem.knowledge.totaljs.conventions import checked_file

        return checked_file(path)

    def check(self, path: Path, text: str) -> list[Finding]:
        from totem.knowledge.totaljs.conventions import check

        return check(path, text)


@functools.cache
def _primer() -> str:
    return (HERE / "primer.txt").read_text(encoding="utf-8").strip()


TOTALJS = TotalJs()
