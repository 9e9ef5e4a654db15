"""Linux: a plan as a bubblewrap command line.

The whole disk is bound read-only, then the writable places read-write over it, then the
protected places read-only again, then the hidden places covered (an empty read-only tmpfs for
a folder, /dev/null for a file). New pid, ipc and (without allowed hosts) network
namespaces: `/proc` shows only the sandbox's own processes, so `/proc/1/root` and
`/proc/self/root` lead back into the sandbox; 127.0.0.1 inside is a loopback of its own.
`--die-with-parent` ends everything inside when the command is stopped.
"""

from __future__ import annotations

from collections.abc import Sequence

from totem.sandbox.plan import SandboxPlan

__all__ = ["bwrap_argv", "limited"]


def limited(plan: SandboxPlan, command: Sequence[str]) -> list[str]:
    """`command` behind a shell that first sets the process limit (soft and hard: a command
    cannot raise it again without the capability the sandbox drops). The shell is the
    command's own (bash, zsh: dash's `ulimit` has no -u)."""
    shell = command[0]
    return [shell, "-c", f'ulimit -u {plan.processes} && exec "$@"', shell, *command]


def bwrap_argv(plan: SandboxPlan, command: Sequence[str], *, bwrap: str = "bwrap") -> list[str]:
    argv = [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc"]
    if not plan.network_open:
        argv.append("--unshare-net")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for place in plan.writable:
        argv += ["--bind", str(place), str(place)]
    for place in plan.protected:
        argv += ["--ro-bind", str(place), str(place)]
    for place in plan.hidden:
        if place.is_dir():
            argv += ["--tmpfs", str(place), "--remount-ro", str(place)]
        else:
            argv += ["--ro-bind", "/dev/null", str(place)]
    argv += ["--chdir", str(plan.root), "--", *limited(plan, command)]
    return argv
