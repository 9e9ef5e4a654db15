"""Which sandbox this computer has, whether it works, and a command wrapped in it.

Linux uses bubblewrap (`bwrap`), macOS Seatbelt (`/usr/bin/sandbox-exec`). Whether bwrap
works is learnt by running it once (user namespaces may be off, a container may forbid
mounts), the first time a command needs it; `totem --version` and a turn without commands
never look. Where there is none, `available()` says why, and commands run as without a
sandbox: asked for, as they always were.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from totem.sandbox.plan import SandboxPlan

__all__ = ["Availability", "available", "wrap"]


@dataclass(frozen=True, slots=True)
class Availability:
    backend: Literal["bwrap", "seatbelt"] | None
    program: str = ""
    reason: str = ""  # why there is no sandbox (backend None)

    @property
    def works(self) -> bool:
        return self.backend is not None


def _probe_bwrap(program: str) -> str:
    """Why bwrap cannot run a command here, or "" when it can."""
    argv = [program, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-net",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{program} could not be started: {exc}"
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        return f"{program} fails here: {said[-1] if said else f'exit code {done.returncode}'}"
    return ""


@functools.cache
def available() -> Availability:
    """The sandbox of this computer (looked for once per process)."""
    if sys.platform == "darwin":
        if os.access("/usr/bin/sandbox-exec", os.X_OK):
            return Availability("seatbelt", "/usr/bin/sandbox-exec")
        return Availability(None, reason="/usr/bin/sandbox-exec is missing")
    if not sys.platform.startswith("linux"):
        return Availability(None, reason=f"no sandbox for {sys.platform}")
    program = shutil.which("bwrap")
    if program is None:
        return Availability(None, reason="bubblewrap (bwrap) is not installed; install the "
                            "`bubblewrap` package (apt, dnf, pacman) to turn it on")
    problem = _probe_bwrap(program)
    if problem:
        return Availability(None, program=program, reason=problem)
    return Availability("bwrap", program)


def wrap(plan: SandboxPlan, command: Sequence[str], found: Availability) -> list[str]:
    """`command` as run inside the sandbox `found`."""
    if found.backend == "bwrap":
        from totem.sandbox.bwrap import bwrap_argv
        from totem.sandbox.pids import entering

        argv = bwrap_argv(plan, command, bwrap=found.program)
        return entering(plan.pids_cgroup, argv) if plan.pids_cgroup is not None else argv
    if found.backend == "seatbelt":
        from totem.sandbox.seatbelt import seatbelt_argv

        return seatbelt_argv(plan, command)
    raise ValueError(f"no sandbox here: {found.reason}")
