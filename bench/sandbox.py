"""What the sandbox costs a command: the bash tool run with the sandbox off and in it.

    .venv/bin/python bench/sandbox.py [--runs 21]

For each command (`true`, `git status`, `python -c pass`), the bash tool runs it `--runs`
times with the sandbox off and as many in workspace-write, the two alternated so that a busy
machine slows both alike, in a fresh git project. Printed: the median wall time of a call
each way, the extra time the sandbox adds and the ratio, all measured in this one run.
Where this computer has no working sandbox it says why and stops.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from totem.abort import AbortSignal
from totem.policy.permission import PermissionService
from totem.sandbox.backend import available
from totem.settings.sandbox import SandboxMode, SandboxSettings
from totem.tools.base import ToolContext, ToolSettings, parse_arguments
from totem.tools.bash import Bash

COMMANDS = ("true", "git status --short", f"{sys.executable} -c pass")


def project(base: Path) -> Path:
    root = base / "project"
    root.mkdir()
    (root / "app.py").write_text("def add(a, b):\n    return a + b\n")
    git = ["git", "-c", "user.email=b@example.com", "-c", "user.name=b"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "first"], cwd=root, check=True)
    return root


def context(root: Path, mode: SandboxMode) -> ToolContext:
    settings = ToolSettings()
    settings.sandbox = SandboxSettings(mode=mode)
    permission = PermissionService(rules=[], mode="yes", project=str(root))
    return ToolContext(root=root, session_id="bench", call_id="bench", abort=AbortSignal(),
                       permission=permission, settings=settings, tool_name="bash")


async def one_call(ctx: ToolContext, command: str) -> float:
    """Seconds of one bash call, from the tool's start to its result."""
    args = parse_arguments(Bash(), {"command": command})
    ctx.abort = AbortSignal()
    start = time.perf_counter()
    result = await Bash().run(args, ctx)  # type: ignore[arg-type]
    took = time.perf_counter() - start
    if result.is_error:
        raise SystemExit(f"bench: {command!r} failed: {result.output}")
    return took


async def measure(root: Path, runs: int) -> list[tuple[str, float, float]]:
    off, inside = context(root, "off"), context(root, "workspace-write")
    rows = []
    for command in COMMANDS:
        await one_call(off, command)  # warm-up each way, not counted
        await one_call(inside, command)
        times: dict[str, list[float]] = {"off": [], "in": []}
        for _ in range(runs):
            times["off"].append(await one_call(off, command))
            times["in"].append(await one_call(inside, command))
        rows.append((command, statistics.median(times["off"]), statistics.median(times["in"])))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    found = available()
    if not found.works:
        raise SystemExit(f"bench: no sandbox on this computer: {found.reason}")
    with tempfile.TemporaryDirectory() as tmp:
        rows = asyncio.run(measure(project(Path(tmp)), args.runs))
    print(f"totem bench sandbox ({found.backend}): one bash call, median of {args.runs} runs "
          "each way, alternated")
    print(f"  {'command':24} {'off':>9} {'workspace-write':>16} {'extra':>9} {'ratio':>6}")
    for command, off, inside in rows:
        name = command.replace(sys.executable, "python")
        print(f"  {name:24} {off * 1000:7.1f} ms {inside * 1000:14.1f} ms "
              f"{(inside - off) * 1000:+7.1f} ms {inside / off:5.2f}x")


if __name__ == "__main__":
    main()
