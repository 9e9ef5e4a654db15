"""One task's run inside its working copy: `python -m totem.batch.headless TASK_JSON`.

Like `totem run --yes`, but the permission to act is bounded by the copy: every action no rule
denies is allowed inside it, and a rule added last (last match wins) denies every path outside
it, whatever the person's config allows elsewhere. The copy is a fresh path, so its own
`.totem` config is not trusted. Prints one JSON object: the run's outcome.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from totem.batch.tasks import BatchTask, task_from_dict
from totem.events import RunFinished

__all__ = ["main", "run_in_copy"]


async def run_in_copy(root: Path, task: BatchTask) -> dict[str, Any]:
    """Run the task's prompt in `root`; the exit reason, final answer, usage, cost, session."""
    from totem.abort import AbortSignal
    from totem.policy.permission import Rule
    from totem.session.service import SessionService
    from totem.settings.config import load_config

    config = load_config(root)
    config.rules.append(Rule("external_directory", "*", "deny"))
    service = SessionService(root, mode="yes", config=config)
    service.questions.interactive = False
    finished: RunFinished | None = None
    try:
        await service.prepare()
        session = service.open(model=task.model)
        async for event in service.run(session, task.prompt, abort=AbortSignal(),
                                       model=task.model, max_steps=task.maxsteps,
                                       agent_name=task.agent):
            if isinstance(event, RunFinished):
                finished = event
        answers = [m for m in service.store.messages(session.id) if m.role == "assistant"]
    finally:
        await service.aclose()
        service.store.close()
    return {
        "session_id": session.id,
        "exit_reason": finished.reason if finished else "error",
        "detail": finished.detail if finished else "the run ended without finishing",
        "final_answer": answers[-1].text() if answers else "",
        "usage": asdict(finished.usage) if finished else {},
        "cost": finished.cost if finished else None,
        "steps": finished.steps if finished else 0,
    }


def _die_with_parent() -> None:
    """End when the process that started this one dies: a lost worker must not leave its run
    going on a copy nobody reads (Linux; elsewhere the run ends on its own)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import os
    import signal

    parent = os.getppid()
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it died before the line above
        os._exit(1)


def main(argv: list[str] | None = None) -> int:
    from totem.settings.errors import ConfigError

    _die_with_parent()
    args = sys.argv[1:] if argv is None else argv
    task = task_from_dict(json.loads(args[0]))
    try:
        outcome = asyncio.run(run_in_copy(Path.cwd(), task))
    except ConfigError as exc:
        outcome = {"exit_reason": "error", "detail": str(exc)}
    print(json.dumps(outcome, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
