"""Start-up without pydantic: built-in tools load when first used, their specs from a cache.

The first request needs only the tool definitions the model sees. They are computed once
per totem version and source change, kept in the user cache directory, and read back at
start-up, so importing pydantic and building seven input models (about 0.1 s here) happens
after the first request is on its way, when the first tool runs.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from totem import __version__
from totem.providers.base import ToolSpec
from totem.settings.paths import cache_dir
from totem.tools.base import Tool, ToolContext, ToolKind, ToolResult, tool_spec

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["LazyTool", "specs_for"]


class LazyTool:
    """A tool named by `module:Class`, imported on first real use.

    `factory` builds it when the class needs arguments (the task tool gets its runner);
    `description` then gives the text the model sees without loading it. `parallel` marks a
    tool whose calls of one answer run side by side (sub-agents).
    """

    def __init__(
        self,
        name: str,
        read_only: bool,
        target: str,
        *,
        factory: Callable[[], Tool] | None = None,
        description: str | None = None,
        parallel: bool = False,
        kind: ToolKind = "builtin",
    ) -> None:
        self._name = name
        self.kind: ToolKind = kind
        self._read_only = read_only
        self.target = target
        self.factory = factory
        self.fixed_description = description
        self.parallel = parallel
        self._tool: Tool | None = None

    def load(self) -> Tool:
        if self._tool is None:
            if self.factory is not None:
                tool = self.factory()
            else:
                module, _, cls = self.target.partition(":")
                tool = getattr(importlib.import_module(module), cls)()
            assert tool.name == self._name and tool.read_only == self._read_only, self.target
            self._tool = tool
        return self._tool

    @property
    def name(self) -> str:
        return self._name

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def description(self) -> str:
        return self.fixed_description or self.load().description

    @property
    def Input(self) -> type[BaseModel]:  # noqa: N802
        return self.load().Input

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        return await self.load().run(args, ctx)


def _source_key(tools: Sequence[LazyTool]) -> str:
    here = Path(__file__).parent
    stamps = []
    for entry in sorted(os.scandir(here), key=lambda e: e.name):
        if entry.name.endswith((".py", ".txt")):
            info = entry.stat()
            stamps.append(f"{entry.name}:{info.st_mtime_ns}:{info.st_size}")
    return json.dumps([__version__, [t.name for t in tools], stamps])


def specs_for(tools: Sequence[Tool], *, cache: Path | None = None) -> list[ToolSpec]:
    """The specs of `tools`: the lazy ones' from the cache when it is current (a fixed
    description is applied on top), the others' computed."""
    lazy = [t for t in tools if isinstance(t, LazyTool)]
    cached = {s.name: s for s in _cached_specs(lazy, cache)}
    specs = []
    for tool in tools:
        spec = cached.get(tool.name) if isinstance(tool, LazyTool) else None
        if spec is None:
            specs.append(tool_spec(tool))
        else:
            description = tool.fixed_description if isinstance(tool, LazyTool) else None
            specs.append(ToolSpec(spec.name, description or spec.description, spec.parameters))
    return specs


def _cached_specs(tools: Sequence[LazyTool], cache: Path | None) -> list[ToolSpec]:
    if not tools:
        return []
    path = cache or cache_dir() / "tool-specs.json"
    key = _source_key(tools)
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored["key"] == key:
            return [ToolSpec(**spec) for spec in stored["specs"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    specs = [tool_spec(t) for t in tools]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        payload = {"key": key, "specs": [asdict(s) for s in specs]}
        tmp.write_text(json.dumps(payload), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs the saving
    return specs
