"""A bound on the processes of sandboxed commands that holds for root too: a pids cgroup.

The sandbox's `ulimit -u` (RLIMIT_NPROC, see bwrap.limited) counts the processes of a user,
and the kernel does not apply it to root (uid 0 of the first user namespace, or a process with
CAP_SYS_ADMIN or CAP_SYS_RESOURCE). bwrap run by root maps root to root, so a fork bomb run by
a totem started as root (a CI machine, a container) would not stop there. For root, commands
therefore enter a pids cgroup of this totem process whose `pids.max` is the limit: a fork past
it fails with EAGAIN, as under the ulimit. The cgroup is made in cgroup v1's pids hierarchy or
under this process's cgroup v2 group, once per limit, and removed at exit; every command of the
process (bash and background processes together) counts against it. Where neither can be
written (cgroups mounted read-only), there is no bound for root, and `totem doctor` says so.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["entering", "pids_cgroup"]

_MADE: dict[int, Path | None] = {}
CGROUPS = Path("/sys/fs/cgroup")


def _own_groups() -> list[Path]:
    """Where cgroups with a pids limit can be made under this process's own groups."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    found: list[Path] = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):  # v1: /sys/fs/cgroup/pids/<path>
            found.append(CGROUPS / "pids" / path.lstrip("/"))
        elif controllers == "":  # v2: the unified hierarchy, alone or beside v1
            for mount in (CGROUPS, CGROUPS / "unified"):
                if (mount / "cgroup.controllers").exists():
                    found.append(mount / path.lstrip("/"))
                    break
    return found


def _make(parent: Path, limit: int) -> Path | None:
    folder = parent / f"totem-{os.getpid()}-{limit}"
    if (parent / "cgroup.subtree_control").exists():  # v2: the controller must be handed down
        with contextlib.suppress(OSError):
            (parent / "cgroup.subtree_control").write_text("+pids")
    try:
        folder.mkdir(exist_ok=True)
        (folder / "pids.max").write_text(str(limit))
        # a process must be able to enter it too (a delegated v2 tree may refuse)
        subprocess.run(entering(folder, ["true"]), check=True, timeout=10,
                       stdin=subprocess.DEVNULL, capture_output=True)
    except (OSError, subprocess.SubprocessError):
        with contextlib.suppress(OSError):
            folder.rmdir()
        return None
    atexit.register(_remove, folder)
    return folder


def _remove(folder: Path) -> None:
    with contextlib.suppress(OSError):
        folder.rmdir()  # fails while a process is left in it: the kernel keeps it then


def pids_cgroup(limit: int) -> Path | None:
    """A cgroup holding at most `limit` processes, or None where none can be made here."""
    if limit not in _MADE:
        _MADE[limit] = next((made for parent in _own_groups()
                             if (made := _make(parent, limit)) is not None), None)
    return _MADE[limit]


def entering(cgroup: Path, argv: Sequence[str]) -> list[str]:
    """`argv` run by a shell that first moves itself into `cgroup` (its children follow)."""
    return ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(cgroup), *argv]
