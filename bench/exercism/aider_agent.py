"""Aider as the agent: its benchmark harness's calls (aider_driver.py), run by the Python of
Aider's own venv (scripts/aider.sh), one process per try, the chat carried to the second."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from bench.exercism.agents import Attempt, Job
from bench.exercism.processes import run_in_group

DRIVER = Path(__file__).with_name("aider_driver.py")
CONTEXT_WINDOW = 8192  # llama-server -c, as bench/smallmodel/server.py starts it
TOKENS_LINE = re.compile(r"Tokens: ([\d.]+)(k?) sent.*?, ([\d.]+)(k?) received")


@dataclass(frozen=True, slots=True)
class AiderAgent:
    """Aider `python` (its venv's), on the OpenAI-compatible server at `base_url`."""

    python: Path
    base_url: str
    model_id: str
    edit_format: str = "whole"
    name: str = "aider"

    def attempt(self, job: Job, message: str, *, try_no: int) -> Attempt:
        if try_no == 1:
            self._seed_model_metadata(job.home)
        message_file = job.home / f"message{try_no}.txt"
        message_file.write_text(message, encoding="utf-8")
        result = job.home / f"result{try_no}.json"
        command = [str(self.python), str(DRIVER), "--model", f"openai/{self.model_id}",
                   "--edit-format", self.edit_format, "--message-file", str(message_file),
                   "--messages", str(job.home / "messages.json"),
                   "--chat-history", str(job.transcripts / "aider.chat.history.md"),
                   "--result", str(result)]
        if try_no >= job.tries:
            command.append("--final")
        for stub in job.exercise.solution:
            command += ["--file", stub]
        for hidden in (*job.exercise.tests, *job.exercise.examples):
            command += ["--ignore", hidden]
        log = job.transcripts / f"aider.try{try_no}.log"
        code, wall = run_in_group(command, cwd=job.work, env=self._environment(job.home),
                                  stdout=log, stderr=None, timeout=job.timeout)
        tokens_in, tokens_out = _tokens(result, log)
        return Attempt(exit_code=code, wall_s=wall, tokens_in=tokens_in, tokens_out=tokens_out,
                       detail="" if code == 0 else _last_line(log))

    def _environment(self, home: Path) -> dict[str, str]:
        """A scratch HOME (no ~/.aider.conf.yml, no ~/.env, no caches of the user's), the
        server as OPENAI_API_BASE, and litellm's bundled model table instead of GitHub's."""
        return {
            "PATH": f"{self.python.parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "OPENAI_API_BASE": self.base_url,
            "OPENAI_API_KEY": "x",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "PYTHONDONTWRITEBYTECODE": "1",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
        }

    def _seed_model_metadata(self, home: Path) -> None:
        """Aider downloads litellm's model table into ~/.aider/caches when its copy there is
        missing or empty; one that names this model (with the server's real window, as
        Aider's docs ask a local model's user to give it) keeps it off the network."""
        caches = home / ".aider" / "caches"
        caches.mkdir(parents=True, exist_ok=True)
        entry = {"max_input_tokens": CONTEXT_WINDOW, "max_tokens": CONTEXT_WINDOW,
                 "max_output_tokens": CONTEXT_WINDOW, "input_cost_per_token": 0.0,
                 "output_cost_per_token": 0.0, "litellm_provider": "openai", "mode": "chat"}
        table = caches / "model_prices_and_context_window.json"
        table.write_text(json.dumps({f"openai/{self.model_id}": entry}))


def _tokens(result: Path, log: Path) -> tuple[int | None, int | None]:
    """The Coder's exact counts when the try ended by itself, else the sum of the "Tokens: X
    sent, Y received" lines it printed (rounded to hundreds above 1k), else unknown."""
    if result.is_file():
        counts = json.loads(result.read_text())
        return int(counts["tokens_sent"]), int(counts["tokens_received"])
    sent = received = 0
    found = False
    for match in TOKENS_LINE.finditer(log.read_text(encoding="utf-8", errors="replace")):
        found = True
        sent += _count(match.group(1), match.group(2))
        received += _count(match.group(3), match.group(4))
    return (sent, received) if found else (None, None)


def _count(number: str, thousands: str) -> int:
    return round(float(number) * (1000 if thousands else 1))


def _last_line(log: Path) -> str:
    lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return lines[-1][:300] if lines else ""
