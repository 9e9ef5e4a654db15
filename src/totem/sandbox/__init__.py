"""The OS sandbox for commands (bash, process): what they may read, write and reach.

Its settings (the `sandbox:` config and `--sandbox`: read-only | workspace-write | off) are
settings/sandbox.py.

    secrets.py    the one list of hidden places and the one list of secret variables
    plan.py       what one command may do in one project
    bwrap.py      Linux: the plan as a bubblewrap command line
    seatbelt.py   macOS: the plan as a Seatbelt profile for sandbox-exec
    backend.py    which of the two this computer has, whether it works, and the wrapping
    pids.py       root's bound on processes (the kernel exempts root from ulimit -u)

The permission check comes first (policy/), then the sandbox: a command the rules do not deny
runs inside it without a question; one the model asks to run outside it is a question of its
own kind (`unsandboxed`), which `--yes` does not answer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from totem.sandbox.plan import SandboxPlan
from totem.sandbox.secrets import filtered_environment

__all__ = ["sandboxed_command"]


def sandboxed_command(
    command: Sequence[str], plan: SandboxPlan, environment: Mapping[str, str]
) -> tuple[list[str], dict[str, str]]:
    """The program line and environment that run `command` inside the plan's sandbox: no
    secret variables, the private temp folder as TMPDIR."""
    from totem.sandbox.backend import available, wrap

    env = filtered_environment(environment)
    temp = str(plan.temp)
    env.update(TMPDIR=temp, TMP=temp, TEMP=temp)
    env.setdefault("HOME", os.path.expanduser("~"))
    return wrap(plan, command, available()), env
