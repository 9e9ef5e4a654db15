"""`totem doctor`: what works on this computer, and why not where it does not.

For now one thing: the sandbox of bash and process (mode, backend, what it hides, the
network), tried with a real command. Exit 0 when the sandbox the config asks for works (or it
is off), 1 when commands would run without it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from totem.cli.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from totem.settings.config import ConfigError, load_config

__all__ = ["doctor_command", "sandbox_report"]


def sandbox_report(root: Path, mode: str | None = None) -> tuple[bool, list[str]]:
    """Whether commands run in the sandbox the config asks for, and the lines that say so."""
    from totem.sandbox.backend import available
    from totem.sandbox.plan import make_plan
    from totem.sandbox.secrets import SECRET_VARIABLES

    settings = load_config(root).tools.sandbox
    if mode:
        settings.mode = mode  # type: ignore[assignment]  # checked by argparse
    if settings.mode == "off":
        return True, ["sandbox: off (commands run as you, asked for as ever)"]
    found = available()
    if not found.works:
        return False, [f"sandbox: {settings.mode} asked for, but commands run WITHOUT it: "
                       f"{found.reason}", "  (each command is asked for instead)"]
    plan = make_plan(settings, root)
    lines = [f"sandbox: {settings.mode}, with {found.backend} ({found.program})"]
    writable = ", ".join(str(p) for p in plan.writable)
    lines.append(f"  writable: {writable}")
    if plan.protected:
        lines.append("  read-only in the project: " + ", ".join(str(p) for p in plan.protected))
    lines.append(f"  hidden ({len(plan.hidden)}): " + (", ".join(str(p) for p in plan.hidden)
                                                      or "none of the listed places exist"))
    if plan.network_open:
        lines.append(f"  network: OPEN, all hosts (the config lists {', '.join(plan.network)})")
    else:
        lines.append("  network: none")
    lines.append(_processes_line(plan.processes, settings.processes, plan.pids_cgroup))
    lines.append(f"  variables not passed in: {', '.join(SECRET_VARIABLES)}")
    return True, lines


def _processes_line(own_limit: int, limit: int, cgroup: Path | None) -> str:
    if os.getuid() != 0:
        return f"  processes: at most {own_limit} of yours at once (ulimit -u)"
    if cgroup is not None:
        return f"  processes: at most {limit} for commands together (pids cgroup {cgroup})"
    return ("  processes: NOT bounded: the kernel does not hold root to ulimit -u, and no pids "
            "cgroup can be made here (run totem as another user to bound a fork bomb)")


def doctor_command(args: argparse.Namespace) -> int:
    root = Path(os.getcwd()).resolve()
    try:
        works, lines = sandbox_report(root, getattr(args, "sandbox", None))
    except ConfigError as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print("\n".join(lines))
    return EXIT_OK if works else EXIT_ERROR
