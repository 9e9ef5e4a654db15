"""What `totem run` adds around a run when no person watches it:

- the message: `-` reads it from stdin; piped input is added to the message as a fenced
  block with its size, cut with a notice past `PIPED_LIMIT`;
- a budget: `--max-cost USD` and `--max-tokens N` stop the run once spent;
- the closing `result` object of `--format json`: answer, finish reason, usage, cost,
  session id, files changed.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, BinaryIO

from totem.events import Event, RunFinished, RunStarted, StepFinished, TextDelta, ToolStart
from totem.messages import Usage

__all__ = ["PIPED_LIMIT", "Budget", "ResultCollector", "message_from", "piped"]

PIPED_LIMIT = 100_000  # bytes of piped input added to the message


def piped(stream: BinaryIO) -> bool:
    """Whether `stream` is a pipe or a file (not a terminal, not /dev/null, not closed)."""
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _fenced(data: bytes, *, limit: int) -> tuple[str, str]:
    """The piped block for the model, and a notice for the person ('' when not cut)."""
    text = data[:limit].decode("utf-8", errors="replace")
    cut = len(data) > limit
    size = f"{len(data):,} bytes" + (f", the first {limit:,} kept" if cut else "")
    fence = "````" if "```" in text else "```"
    block = f"Piped input ({size}):\n{fence}\n{text.rstrip()}\n{fence}"
    if cut:
        block += f"\n[The input was cut: {len(data) - limit:,} more bytes were not included.]"
    notice = (f"The piped input was cut to its first {limit:,} of {len(data):,} bytes."
              if cut else "")
    return block, notice


def message_from(words: list[str], stdin: BinaryIO, *, limit: int = PIPED_LIMIT) -> tuple[str, str]:
    """The message to send and a notice ('' for none). `-` alone means: the message is
    stdin; otherwise piped input follows the words. ValueError when there is no message."""
    if words == ["-"]:
        data = stdin.read() if piped(stdin) else b""
        text = data[:limit].decode("utf-8", errors="replace").strip()
        if not text:
            raise ValueError("`totem run -` reads the message from stdin, and stdin is empty.")
        notice = (f"The message read from stdin was cut to its first {limit:,} of "
                  f"{len(data):,} bytes." if len(data) > limit else "")
        return text, notice
    message = " ".join(words)
    data = stdin.read() if piped(stdin) else b""
    if not data.strip():
        return message, ""
    block, notice = _fenced(data, limit=limit)
    return f"{message}\n\n{block}", notice


@dataclass(slots=True)
class Budget:
    """Limits on what one run may spend; `exceeded` says which was passed, once."""

    max_cost: float | None = None
    max_tokens: int | None = None
    cost: float = 0.0
    tokens: int = 0
    reason: str = ""

    def exceeded(self, event: Event) -> str:
        """After a step: the notice when a limit is now reached ('' otherwise)."""
        if not isinstance(event, StepFinished) or self.reason:
            return ""
        self.cost += event.cost or 0.0
        self.tokens += event.usage.input + event.usage.output
        if self.max_cost is not None and self.cost >= self.max_cost:
            self.reason = (f"Stopped: the run has cost ${self.cost:.4f}, reaching --max-cost "
                           f"${self.max_cost:g}.")
        elif self.max_tokens is not None and self.tokens >= self.max_tokens:
            self.reason = (f"Stopped: the run has used {self.tokens:,} tokens, reaching "
                           f"--max-tokens {self.max_tokens:,}.")
        return self.reason


@dataclass(slots=True)
class ResultCollector:
    """Follows a run's events; `result` is the closing object of `--format json`."""

    answer: str = ""
    _step_text: list[str] = field(default_factory=list)
    finished: RunFinished | None = None
    started: str = ""  # the id of the request's user message

    def see(self, event: Event) -> None:
        match event:
            case RunStarted(message_id=message_id):
                self.started = self.started or message_id
            case TextDelta(text=text):
                self._step_text.append(text)
            case ToolStart():
                self._step_text.clear()
            case StepFinished() | RunFinished():
                if "".join(self._step_text).strip():
                    self.answer = "".join(self._step_text).strip()
                self._step_text.clear()
                if isinstance(event, RunFinished):
                    self.finished = event
            case _:
                pass

    def result(self, *, session_id: str, files: list[str], reason: str,
               detail: str) -> dict[str, Any]:
        finished = self.finished
        usage = finished.usage if finished is not None else Usage()
        return {
            "type": "result",
            "answer": self.answer,
            "finish_reason": reason,
            "detail": detail,
            "steps": finished.steps if finished is not None else 0,
            "usage": asdict(usage),
            "cost": finished.cost if finished is not None else None,
            "session_id": session_id,
            "files_changed": files,
        }


def stdin_bytes() -> BinaryIO:
    """The process's stdin as bytes."""
    return sys.stdin.buffer
