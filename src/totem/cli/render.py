"""Text rendering of events for the terminal, and the permission question."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO, assert_never

from totem.cli.diff_view import diff_lines
from totem.cli.lines import LineReader
from totem.cli.markdown_stream import MarkdownStream
from totem.events import (
    AgentEvent,
    Event,
    Notice,
    PermissionAsked,
    PlanProposed,
    QuestionAsked,
    ReasoningDelta,
    RunFinished,
    RunStarted,
    StepFinished,
    TextDelta,
    TodoUpdated,
    ToolEnd,
    ToolProgress,
    ToolStart,
)
from totem.policy.permission import Reply
from totem.tools.diffs import diff_stat

__all__ = ["TextRenderer", "ask_permission", "ask_question", "summarize_input"]


def _style(code: str, text: str, tty: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if tty else text


def summarize_input(data: dict[str, Any] | None, limit: int = 100) -> str:
    if not data:
        return ""
    if "command" in data:
        text = str(data["command"])
    elif "path" in data and len(data) <= 3:
        text = " ".join(f"{v}" for k, v in data.items() if k in ("path", "pattern"))
    else:
        text = json.dumps(data, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TextRenderer:
    """Streams the answer; tool calls, notices and reasoning shown compactly."""

    def __init__(self, out: TextIO | None = None, *, markdown: bool = False) -> None:
        self.out = out or sys.stdout
        self.tty = self.out.isatty()
        # Answers drawn as Markdown (the chat on a terminal); raw text otherwise.
        self._markdown: MarkdownStream | None = MarkdownStream(self.out) \
            if markdown and self.tty else None
        self._thinking = False
        self._midline = False
        self._asked_diffs: set[str] = set()  # diffs already shown in a question

    def _line(self, text: str) -> None:
        if self._midline:
            self.out.write("\n")
            self._midline = False
        self.out.write(text + "\n")
        self.out.flush()

    def _thread(self, agent: str, event: Event) -> None:
        """A sub-agent's thread, compactly: its tool calls, notices and how it ended."""
        prefix = _style("35", f"  ┆ {agent}", self.tty)
        match event:
            case ToolStart(name=name, input=data):
                self._line(f"{prefix} ● {name} {summarize_input(data, 70)}")
            case ToolEnd(is_error=True, output=output):
                self._line(f"{prefix} └ {output.strip().splitlines()[0][:100] if output else ''}")
            case Notice(text=text):
                self._line(f"{prefix} ! {text}")
            case RunFinished(reason=reason, steps=steps, usage=usage, cost=cost):
                money = f" · ${cost:.4f}" if cost is not None else ""
                self._line(f"{prefix} {reason} after {steps} steps · "
                           f"{usage.input + usage.output:,} tokens{money}")
            case _:
                pass

    def show(self, event: Event) -> None:
        if self._markdown is not None:
            if isinstance(event, TextDelta):
                self._thinking = False
                self._markdown.add(event.text)
                return
            self._markdown.close()
        match event:
            case TextDelta(text=text):
                self._thinking = False
                self.out.write(text)
                self._midline = not text.endswith("\n")
                self.out.flush()
            case ReasoningDelta():
                if not self._thinking:
                    self._thinking = True
                    self._line(_style("2;3", "thinking…", self.tty))
            case ToolStart(name=name, input=data, from_text=from_text):
                mark = " (written as text)" if from_text else ""
                self._line(_style("36", f"● {name}", self.tty) + f" {summarize_input(data)}{mark}")
            case ToolEnd(output=output, is_error=is_error, diff=diff, diagnostics=found):
                lines = output.strip().splitlines() or [""]
                more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
                head = lines[0][:120] + more + (f" · {diff_stat(diff)}" if diff else "")
                self._line(_style("31" if is_error else "2", f"  └ {head}", self.tty))
                if diff and diff not in self._asked_diffs:
                    for line in diff_lines(diff, tty=self.tty, limit=20):
                        self._line(line)
                for line in found.splitlines():  # a language server's new errors
                    self._line(_style("33", f"  ⚠ {line.strip()}", self.tty))
            case Notice(text=text, level=level):
                self._line(_style("33" if level != "info" else "2", f"! {text}", self.tty))
            case RunFinished(reason=reason, detail=detail):
                if self._midline:
                    self._line("")
                if reason != "finished":
                    self._line(_style("33", f"[{reason}] {detail}".strip(), self.tty))
            case ToolProgress(name=name, message=message, progress=progress, total=total):
                amount = f" {progress:g}/{total:g}" if progress is not None and total else ""
                self._line(_style("2", f"  … {name}{amount} {message}".rstrip(), self.tty))
            case AgentEvent(agent=agent, event=inner):
                self._thread(agent, inner)
            case TodoUpdated(todos=todos):
                marks = {"done": "☑", "in_progress": "▶"}
                for item in todos:
                    mark = marks.get(item.get("status", ""), "☐")
                    self._line(_style("2", f"  {mark} {item.get('content', '')}", self.tty))
            case PermissionAsked(diff=diff):
                self._asked_diffs.add(diff)
            case PlanProposed(steps=steps):
                self._line(_style("1", f"Plan ({len(steps)} steps):", self.tty))
                for number, step in enumerate(steps, 1):
                    self._line(f"  {number}. {step}")
            case RunStarted() | StepFinished() | QuestionAsked():
                pass
            case _:
                assert_never(event)


PERMISSION_CHOICES = "  [y] once  [a] always  [n] reject  [m] reject with a message > "


async def ask_question(event: QuestionAsked, reader: LineReader) -> str | None:
    """Ask in the terminal: a numbered option, or free text when allowed."""
    print(f"\n? {event.question}")
    for number, option in enumerate(event.options, start=1):
        print(f"    {number}. {option}")
    while True:
        try:
            answer = (await reader.read("  answer > ", fresh=True)).strip()
        except EOFError:
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(event.options):
            return event.options[int(answer) - 1]
        if answer and (event.allow_free or answer in event.options):
            return answer


async def ask_permission(event: PermissionAsked, reader: LineReader) -> Reply:
    """Ask in the terminal: once / always / reject / reject with a message for the model.

    Only a line typed after the question appears answers it, and a blank line asks again.
    """
    print(f"\n? {event.tool} wants to {event.title}")
    if event.diff:
        print("\n".join(diff_lines(event.diff, tty=sys.stdout.isatty())))
    else:
        for pattern in event.patterns[:10]:
            print(f"    {pattern}")
    stored = ", ".join(event.always) or "nothing (this will ask again)"
    print(f"  always allows, in this project: {stored}")
    while True:
        try:
            answer = await reader.read(PERMISSION_CHOICES, fresh=True)
        except EOFError:
            return Reply("reject")
        answer = answer.strip().lower()
        if answer in ("y", "yes", "o", "once"):
            return Reply("once")
        if answer in ("a", "always"):
            return Reply("always")
        if answer in ("n", "no", "r", "reject"):
            return Reply("reject")
        if answer in ("m", "message"):
            try:
                message = await reader.read("  message for the model > ")
            except EOFError:
                message = ""
            return Reply("reject", message.strip())
