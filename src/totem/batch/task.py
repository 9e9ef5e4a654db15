"""One task from start to result: copy the repository, run the prompt in the copy (a process
of its own), take the diff, remove the copy (unless kept). The unit both pools run; it never
raises for a task's own failure: that is a result with status "failed".

A result (one line of the results file):

    {"id", "status": "ok" | "failed", "exit_reason", "detail", "final_answer", "diff",
     "files_changed", "usage", "cost", "steps", "wall_s", "session_id", "copy", "host"}

"ok" means the run ended on its own (answered, or a limit); "failed" that it could not run or
ended in an error, which `detail` says.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from totem.batch.tasks import BatchTask, task_from_dict
from totem.batch.workcopy import CopyError, WorkCopy, make_copy

__all__ = ["TaskOptions", "execute_task", "failed_result"]


@dataclass(frozen=True, slots=True)
class TaskOptions:
    scratch: str  # where copies are made
    keep: bool = False  # keep each copy after its run
    timeout: float = 3600.0  # seconds one run may take


def _run(copy: WorkCopy, task: BatchTask, *, timeout: float) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "totem.batch.headless", json.dumps(task.to_dict())],
        cwd=copy.root, capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    lines = done.stdout.strip().splitlines()
    try:
        outcome: dict[str, Any] = json.loads(lines[-1])
    except (IndexError, ValueError):
        said = done.stderr.strip().splitlines()
        reason = said[-1] if said else f"exit status {done.returncode}"
        return {"exit_reason": "error", "detail": f"the run failed: {reason}"}
    return outcome


def failed_result(task_id: str, detail: str, *, wall: float = 0.0) -> dict[str, Any]:
    return {"id": task_id, "status": "failed", "exit_reason": "error", "detail": detail,
            "final_answer": "", "diff": "", "files_changed": 0, "usage": {}, "cost": None,
            "steps": 0, "wall_s": round(wall, 3), "session_id": None, "copy": None,
            "host": socket.gethostname()}


def execute_task(task_data: dict[str, Any], options: TaskOptions) -> dict[str, Any]:
    """Run one task (as a dict, so any worker can take it); its result."""
    task = task_from_dict(task_data)
    started = time.monotonic()
    try:
        copy = make_copy(task, scratch=Path(options.scratch))
    except (CopyError, OSError) as exc:
        return failed_result(task.id, f"no working copy: {exc}",
                             wall=time.monotonic() - started)
    try:
        try:
            outcome = _run(copy, task, timeout=options.timeout)
        except subprocess.TimeoutExpired:
            outcome = {"exit_reason": "error", "detail": f"timed out after {options.timeout:g} s"}
        diff = copy.diff()
    except (CopyError, OSError) as exc:
        outcome, diff = {"exit_reason": "error", "detail": str(exc)}, ""
    finally:
        if not options.keep:
            copy.remove()
    result = failed_result(task.id, "", wall=time.monotonic() - started)
    result.update(outcome)
    result.update(
        status="failed" if result["exit_reason"] == "error" else "ok",
        diff=diff,
        files_changed=sum(1 for line in diff.splitlines() if line.startswith("diff --git ")),
        copy=str(copy.root) if options.keep else None,
        host=os.uname().nodename,
    )
    return result
