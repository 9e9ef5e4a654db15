"""totem as the agent: `python -m totem run --yes --format json MESSAGE` in the exercise's
folder, the second try with `--continue` (the same session), as bench/smallmodel runs it."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.exercism.agents import Attempt, Job
from bench.exercism.processes import run_in_group
from bench.smallmodel.agent import Outcome, dump_messages, read_events


@dataclass(frozen=True, slots=True)
class TotemAgent:
    """totem from `totem_src/src`, on the OpenAI-compatible server at `base_url`."""

    totem_src: Path
    base_url: str
    model_id: str
    name: str = "totem"
    options: dict[str, Any] = field(default_factory=dict)  # added to the provider's options

    def attempt(self, job: Job, message: str, *, try_no: int) -> Attempt:
        env = self._environment(job.home)
        command = [sys.executable, "-m", "totem", "run", "--yes", "--format", "json"]
        if try_no > 1:
            command.append("--continue")
        log = job.transcripts / f"totem.try{try_no}.jsonl"
        code, wall = run_in_group([*command, "--", message], cwd=job.work, env=env, stdout=log,
                                  stderr=log.with_suffix(".stderr"), timeout=job.timeout)
        outcome = Outcome(task=job.exercise.name, model=self.model_id, round=try_no,
                          passed=False, reason="", wall_s=wall, exit_code=code,
                          timed_out=code is None)
        read_events(log, into=outcome)
        dump_messages(job.home, job.transcripts / "totem.messages.json")
        return Attempt(exit_code=code, wall_s=wall, tokens_in=outcome.prompt_tokens,
                       tokens_out=outcome.completion_tokens, detail=outcome.finish,
                       tools=outcome.tools)

    def _environment(self, home: Path) -> dict[str, str]:
        """A fresh HOME and XDG folders (no user config is read) and a TOTEM_CONFIG file that
        names the server `local`, as bench/smallmodel does."""
        for sub in (".config", ".local/share", ".local/state", ".cache"):
            (home / sub).mkdir(parents=True, exist_ok=True)
        config = home / "totem-bench.yaml"
        config.write_text(
            "providers:\n"
            f"  local: {{kind: openai, base_url: {json.dumps(self.base_url)}, "
            f"options: {json.dumps(self.options)}}}\n"
            f"model: {json.dumps('local/' + self.model_id)}\n"
        )
        keep = {k: os.environ[k] for k in ("LANG", "LC_ALL", "TERM", "TZ") if k in os.environ}
        return {
            **keep,
            # the runner's venv first: `python -m pytest` works for the agent as for the check
            "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_STATE_HOME": str(home / ".local/state"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "TOTEM_CONFIG": str(config),
            "PYTHONPATH": str(self.totem_src / "src"),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
