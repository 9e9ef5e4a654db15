"""What the config says about the tools: bash's limits, output size, the sandbox...

The data only, read by settings/config.py and carried to each tool in its context
(tools/base.py `ToolContext.settings`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from totem.settings.sandbox import SandboxSettings
from totem.settings.snapshots import SnapshotSettings

__all__ = ["ToolSettings"]


@dataclass(slots=True)
class ToolSettings:
    bash_timeout: float = 120.0
    bash_max_timeout: float = 600.0
    output_limit: int = 30_000  # characters kept of a tool's output
    forbidden_commands: list[str] = field(default_factory=list)
    shell: str = "/bin/bash"
    websearch_url: str | None = None  # a SearXNG URL; without one there is no websearch tool
    # tokens the MCP tools' definitions may take before they are offered by name only;
    # None: 2,000, and no more than a tenth of the model's window
    mcp_schema_budget: int | None = None
    # bash and process's sandbox: off in settings made in code; the config's default (what
    # load_config gives) is workspace-write
    sandbox: SandboxSettings = field(default_factory=lambda: SandboxSettings(mode="off"))
    # the work tree's snapshots before calls that may change files: off in settings made in
    # code, on in what load_config gives (totem.settings.snapshots)
    snapshots: SnapshotSettings = field(default_factory=SnapshotSettings)
