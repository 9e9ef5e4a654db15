"""macOS: a plan as a Seatbelt profile for `/usr/bin/sandbox-exec -p PROFILE`.

The profile denies by default, then allows what a build needs (processes, signals to its
own, sysctl and Mach lookups, pseudo-terminals), reading everywhere but the hidden places,
writing only to the writable places (never the protected ones) and the few devices every
program writes to, and the network (DNS included) only when the plan opens it. Later rules win in
Seatbelt, so each deny comes after the allow it narrows. Paths are written as literal
strings, escaped; `/private/var` and `/private/tmp` are the real forms of `/var` and
`/tmp`, which Seatbelt matches against.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from totem.sandbox.bwrap import limited
from totem.sandbox.plan import SandboxPlan

__all__ = ["SANDBOX_EXEC", "seatbelt_argv", "seatbelt_profile"]

SANDBOX_EXEC = "/usr/bin/sandbox-exec"

_BASE = """(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow mach-lookup)
(allow ipc-posix-shm)
(allow ipc-posix-sem)
(allow file-ioctl)
(allow pseudo-tty)
(allow file-read*)"""

_DEVICES = ("/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper", "/dev/stdout",
            "/dev/stderr")


def quoted(path: Path | str) -> str:
    """A Seatbelt string literal: backslashes and double quotes escaped."""
    text = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _filter(path: Path) -> str:
    kind = "subpath" if path.is_dir() else "literal"
    return f"({kind} {quoted(_real(path))})"


def seatbelt_profile(plan: SandboxPlan) -> str:
    lines = [_BASE]
    if plan.hidden:
        lines.append("(deny file-read* " + " ".join(_filter(p) for p in plan.hidden) + ")")
    places = " ".join(f"(subpath {quoted(_real(p))})" for p in plan.writable)
    devices = " ".join(f"(literal {quoted(d)})" for d in _DEVICES)
    lines.append(f"(allow file-write* {places} {devices} (regex #\"^/dev/ttys[0-9]+$\"))")
    if plan.protected:
        lines.append("(deny file-write* " + " ".join(_filter(p) for p in plan.protected) + ")")
    if plan.hidden:
        lines.append("(deny file-write* " + " ".join(_filter(p) for p in plan.hidden) + ")")
    if plan.network_open:
        lines.append("(allow network-outbound)\n(allow network-inbound)\n(allow system-socket)")
    return "\n".join(lines) + "\n"


def seatbelt_argv(plan: SandboxPlan, command: Sequence[str]) -> list[str]:
    return [SANDBOX_EXEC, "-p", seatbelt_profile(plan), *limited(plan, command)]
