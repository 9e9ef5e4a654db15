"""The agent: everything a run needs, built by the session service from the config."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from totem.events import Event
from totem.hooks import Hooks
from totem.policy.modes import SessionMode
from totem.policy.permission import PermissionService
from totem.policy.questions import QuestionService
from totem.policy.redact import Redactor
from totem.providers.base import Provider, ToolSpec
from totem.providers.catalog.catalogue import Price
from totem.providers.catalog.profiles import ModelProfile
from totem.providers.localserver.sampling import Sampling
from totem.run.assist import AssistFactory
from totem.store.base import Store
from totem.tools.base import AfterWrite, Tool, ToolSettings
from totem.tools.files import DiskFiles, FileAccess
from totem.tools.state import SessionState
from totem.tools.terminal import Terminal

if TYPE_CHECKING:
    from totem.snapshots.calls import CallSnapshots

__all__ = ["Agent", "CacheClock", "Preparer", "Refresher", "ToolChange"]

# Given the run's event sink (for the questions it asks), returns the tools it adds.
Preparer: TypeAlias = Callable[[Callable[[Event], None]], Awaitable[list[Tool]]]


@dataclass(frozen=True, slots=True)
class ToolChange:
    """Tools that went and came between two steps (an MCP server changed its list)."""

    removed: frozenset[str]
    added: list[Tool]


# Asked before each step: the change in the tools it added, or None.
Refresher: TypeAlias = Callable[[], Awaitable[ToolChange | None]]


class CacheClock:
    """When the session's prompt-cache entry expires (time.time()); 0: none known."""

    def __init__(self) -> None:
        self.until = 0.0


@dataclass(slots=True)
class Agent:
    """Everything a run needs; built by the session service from the config."""

    provider: Provider
    model: str
    label: str  # provider/model, as shown
    profile: ModelProfile
    tools: list[Tool]
    store: Store
    root: Path
    permission: PermissionService
    system: str
    settings: ToolSettings = field(default_factory=ToolSettings)
    max_steps: int = 50
    max_rounds: int = 300
    redact: Redactor = field(default_factory=Redactor)
    specs: list[ToolSpec] | None = None  # the tools' definitions, when already computed
    questions: QuestionService | None = None
    context_window: int | None = None  # tokens; None: unknown, no compaction
    price: Price | None = None  # per million tokens; None: unknown, no cost shown
    # What runs before the first step, in order, each adding tools that start with a run
    # (the MCP servers', then a knowledge pack's); a sub-agent's run has none.
    preparers: list[Preparer] = field(default_factory=list)
    refreshers: list[Refresher] = field(default_factory=list)  # their tools, between steps
    after_write: list[AfterWrite] = field(default_factory=list)  # a pack's check, say
    sampling: Sampling = field(default_factory=Sampling)  # bounds, temperature, tool mode
    cache_ttl: float | None = None  # seconds a prompt-cache entry lives; None: no cache
    state: SessionState = field(default_factory=SessionState)
    # What a run gets beyond the loop for this kind of model (run/assist.py); None: nothing.
    assist: AssistFactory | None = None
    hooks: Hooks | None = None  # the person's hooks (totem.hooks), run at the loop's events
    mode: SessionMode = "default"  # plan: reading tools only (policy/modes.py)
    # Where the file tools read and write, and bash runs (an editor's, over ACP).
    files: FileAccess = field(default_factory=DiskFiles)
    terminal: Terminal | None = None
    # The work tree's snapshots around calls that may change files, for undo (None: none).
    snapshots: CallSnapshots | None = None
