"""What one sandboxed command may do: the plan, built from the settings and the project.

    readable    the whole disk, except the hidden places (secrets.hidden_places)
    writable    workspace-write: the project and a private temp folder; read-only: the temp
                folder only
    protected   inside the project, read-only even in workspace-write: `.git/hooks`,
                `.git/config` (a hook or `core.fsmonitor` there runs later, outside), `.totem`
    network     none, unless the settings list a host (then all of it: see settings.py)
    processes   at most this many more than the person runs already (a fork bomb stops);
                for root, whom that limit does not hold, at most this many in a pids cgroup
                (pids.py), where one can be made
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from totem.sandbox.pids import pids_cgroup
from totem.sandbox.secrets import hidden_places
from totem.settings.sandbox import SandboxMode, SandboxSettings

__all__ = ["PROTECTED", "SandboxPlan", "make_plan", "private_temp"]

PROTECTED = (".git/hooks", ".git/config", ".totem")

_TEMP: list[Path] = []


def private_temp() -> Path:
    """This process's own temp folder for commands (TMPDIR inside), removed at exit."""
    if not _TEMP:
        made = Path(os.path.realpath(tempfile.mkdtemp(prefix="totem-sandbox-")))
        atexit.register(shutil.rmtree, made, True)
        _TEMP.append(made)
    return _TEMP[0]


@dataclass(frozen=True, slots=True)
class SandboxPlan:
    mode: SandboxMode  # read-only or workspace-write (off has no plan)
    root: Path
    temp: Path
    hidden: tuple[Path, ...] = ()
    protected: tuple[Path, ...] = ()
    network: tuple[str, ...] = ()  # the hosts that opened it; empty: no network
    processes: int = 256  # the limit on the person's processes, counted when planned
    writable: tuple[Path, ...] = field(default=())
    pids_cgroup: Path | None = None  # root's bound on processes (pids.py), where there is one

    @property
    def network_open(self) -> bool:
        return bool(self.network)


def _own_processes() -> int:
    """How many processes the person runs now (what RLIMIT_NPROC counts)."""
    uid = os.getuid()
    count = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 512  # no /proc (macOS): a margin instead of a count
    for entry in entries:
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count


def make_plan(settings: SandboxSettings, root: Path) -> SandboxPlan:
    """The plan of a command run in `root` under `settings` (whose mode is not off)."""
    assert settings.mode != "off"
    real = Path(os.path.realpath(root))
    temp = private_temp()
    writable = (real, temp) if settings.mode == "workspace-write" else (temp,)
    if (real / ".git").is_dir() and not os.path.lexists(real / ".git" / "hooks"):
        (real / ".git" / "hooks").mkdir()  # so that it can be read-only: a hook made in
        # the sandbox would run outside it at the person's next commit
    protected = tuple(real / p for p in PROTECTED if os.path.lexists(real / p))
    return SandboxPlan(
        mode=settings.mode,
        root=real,
        temp=temp,
        hidden=tuple(hidden_places(settings.hidden, root=real)),
        protected=protected if settings.mode == "workspace-write" else (),
        network=tuple(settings.network),
        processes=_own_processes() + settings.processes,
        writable=writable,
        pids_cgroup=pids_cgroup(settings.processes) if _is_root() else None,
    )


def _is_root() -> bool:
    return hasattr(os, "getuid") and os.getuid() == 0
