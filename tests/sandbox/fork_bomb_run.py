"""Run by test_bwrap_commands as an unprivileged user (the kernel does not hold root to
RLIMIT_NPROC): a real fork bomb through the bash tool in the sandbox, for 4 seconds. Prints
the most processes a watcher saw in the sandbox, and the tool's last line."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from totem.abort import AbortSignal
from totem.policy.permission import PermissionService
from totem.settings.sandbox import SandboxSettings
from totem.tools.base import ToolContext, ToolSettings, parse_arguments
from totem.tools.bash import Bash

WATCH = ("(for i in $(seq 3000); do n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; "
         "echo $n >> counts; done) & ")


def main(root: Path) -> None:
    settings = ToolSettings(bash_timeout=4)
    settings.sandbox = SandboxSettings(processes=24)
    ctx = ToolContext(root=root, session_id="s", call_id="c", abort=AbortSignal(),
                      permission=PermissionService(rules=[], mode="headless", project=str(root)),
                      settings=settings, tool_name="bash")
    args = parse_arguments(Bash(), {"command": WATCH + "b() { b | b & }; b 2>> bomb.err; wait"})
    result = asyncio.run(Bash().run(args, ctx))  # type: ignore[arg-type]
    counts = [int(n) for n in (root / "counts").read_text().split()]
    print(max(counts))
    print(result.output.splitlines()[-1])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
