"""Executing a step's tool calls: permission, run, result, and the guards against loops.

Calls run in order, except read-only calls (and tools marked `parallel`, the sub-agents),
which run side by side. Every failure a model can act on becomes the call's result; an abort
closes the call with "[Aborted by user]" and ends the run. Three refusals in a row, or the
same call with the same result a third time, stop the run (`Stop`).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from totem.abort import Aborted, AbortSignal
from totem.events import Event, FinishReason, Notice, ToolEnd, ToolStart
from totem.messages import Message, ToolPart
from totem.policy.permission import PermissionDenied
from totem.providers.base import ToolSpec
from totem.run.user_hooks import after_tool, before_tool
from totem.tools.base import Tool, ToolContext, ToolError, ToolResult, parse_arguments, tool_spec
from totem.tools.read_first import ReadFirst

if TYPE_CHECKING:
    from pydantic import BaseModel

    from totem.run.agent import Agent

__all__ = ["ABORTED_OUTPUT", "Stop", "ToolRunner"]

MAX_DENIALS = 3
REPEAT_LIMIT = 3
# calls that fail with the same error, one after another, each a little different (the
# 0.5B edited "the 13th" to the 14th, 15th ... 40th until killed)
SAME_FAILURE_LIMIT = 4
READ_CONCURRENCY = 8
ABORTED_OUTPUT = "[Aborted by user]"
REPEAT_HINT = (
    "\n\n[Note: this is the same call with the same result as before. Do not repeat it: use "
    "the result above, or answer the user now.]"
)


# what differs between two runs of one command with the same outcome: how long it took
# (pytest's "1 passed in 0.02s"), a clock time, an address; left out when calls are compared
# (the same test run, its time different each time, was made twenty times)
_INCIDENTAL = re.compile(
    r"\b\d+(?:\.\d+)?\s*(?:s|ms|us|µs|sec|secs|seconds?|minutes?)\b"
    r"|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b|\b0x[0-9a-fA-F]{4,}\b")


def comparable(output: str) -> str:
    """`output` without what differs between two runs with the same outcome (`_INCIDENTAL`)."""
    return _INCIDENTAL.sub("#", output)


def _signature(part: ToolPart) -> str:
    """What makes two calls the same for the repeat guard: the tool, its input, and its
    result as `comparable` (the guard's own hint, added to a repeat's result, left out)."""
    output = comparable(part.output.removesuffix(REPEAT_HINT))
    return json.dumps([part.name, part.input, output], sort_keys=True)


class Stop(Exception):
    """Ends the loop with a reason; the detail is shown to the person."""

    def __init__(self, reason: FinishReason, detail: str = "") -> None:
        super().__init__(detail)
        self.reason: FinishReason = reason
        self.detail = detail


class ToolRunner:
    def __init__(
        self,
        agent: Agent,
        session_id: str,
        *,
        emit: Callable[[Event], None],
        abort: AbortSignal,
        save: Callable[[Message, ToolPart], None],
        history: Sequence[Message],
        asks: Callable[[Event], None] | None = None,
    ) -> None:
        self.agent = agent
        self.session_id = session_id
        self.emit = emit
        self.asks = asks if asks is not None else emit
        self.abort = abort
        self.save = save
        self.history = history  # the run's own, kept current as it goes
        self.tools = {t.name: t for t in agent.tools}
        self.denials = 0
        self.seen_calls: dict[str, int] = {}
        self.failures = 0  # the same failed call result, one after another
        self.last_failure: tuple[str, str] | None = None
        self._read_first: ReadFirst | None = None
        # a reason to refuse a call before it runs (the run's assist, run/assist.py), or None
        self.hold: Callable[[str, dict[str, Any]], str | None] = lambda name, args: None

    async def execute(
        self, message: Message, calls: list[ToolPart], *, guarded: bool = True
    ) -> None:
        """Run `calls` in order (read-only neighbours together). `guarded`: the model's own
        calls, which the refusal and repeat guards watch; totem's own calls for the model
        (reading ahead, the small-model aid) are not the model repeating itself."""
        index = 0
        while index < len(calls):
            group = [calls[index]]
            if self._together(calls[index]):
                while index + len(group) < len(calls) and self._together(
                    calls[index + len(group)]
                ):
                    group.append(calls[index + len(group)])
            index += len(group)
            if len(group) == 1:
                await self._call(message, group[0])
            else:
                await self._call_together(message, group)
            try:
                for part in group:
                    if guarded:
                        self._check_guards(message, part)
                    else:  # counted, so that the model's own repeat of it is seen
                        self._seen(part)
            except Stop:
                for skipped in calls[index:]:
                    self.finish(message, skipped, "Not run: the run stopped.", error=True)
                raise

    async def _call_together(self, message: Message, group: list[ToolPart]) -> None:
        limit = asyncio.Semaphore(READ_CONCURRENCY)

        async def bounded(part: ToolPart) -> None:
            async with limit:
                await self._call(message, part)

        # one call's exception (an abort seen first by one of them) ends the group only after
        # its siblings are cancelled and finished: none may run, or report, after the run ends
        running = [asyncio.ensure_future(bounded(p)) for p in group]
        try:
            await asyncio.gather(*running)
        except BaseException:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            raise

    def _together(self, part: ToolPart) -> bool:
        """Read-only calls, and tools marked `parallel` (sub-agents), run side by side."""
        tool = self.tools.get(part.name)
        return tool is not None and (tool.read_only or bool(getattr(tool, "parallel", False)))

    async def _call(self, message: Message, part: ToolPart) -> None:
        self.abort.check()
        if part.name not in self.tools and self.agent.profile.text_tool_calls:
            from totem.tools.schema_copy import repair_unknown

            repair_unknown(part, self.tools)
        self.emit(ToolStart(part.call_id, part.name, part.input, part.from_text))
        unreadable = (part.meta or {}).get("unreadable")
        if unreadable:  # a change the model wrote as text that could not be read: why
            self.finish(message, part, unreadable, error=True)
            return
        tool = self.tools.get(part.name)
        if tool is None:
            known = ", ".join(sorted(self.tools))
            self.finish(message, part, f"Unknown tool '{part.name}'. Tools: {known}. Call one "
                        "of these by its exact name.", True)
            return
        try:
            args = self._validated(tool, part)
        except ToolError as exc:
            self.finish(message, part, str(exc), error=True)
            return
        refused = await before_tool(self.agent, self.session_id, part, self.emit)
        if refused is not None:  # a pre_tool hook blocked it
            part.title = "denied"
            self.finish(message, part, refused, error=True)
            return
        part.state = "running"
        self.save(message, part)
        part.meta = dict(part.meta or {})  # what the call came with stays (how it was asked)
        ctx = self._context(tool, part)
        try:
            from totem.tools.containment import contain

            await contain(tool.name, part.input or {}, ctx)  # outside the project: first
            self._refuse(tool, part)
            result = await self._watched(tool, args, ctx)
        except ToolError as exc:
            self.finish(message, part, str(exc), error=True)
        except PermissionDenied as exc:
            part.title = "denied"
            self.finish(message, part, exc.message, error=True)
        except (Aborted, asyncio.CancelledError):
            self.finish(message, part, ABORTED_OUTPUT, error=True)
            raise
        except Exception as exc:  # a bug in a tool must not end the run
            text = f"The tool failed unexpectedly: {type(exc).__name__}: {exc}"
            self.finish(message, part, text, error=True)
        else:
            part.images = result.images
            part.title = result.title
            self.read_first.record(tool.name, part.input or {}, output=result.output)
            said = await after_tool(self.agent, self.session_id, part, result.output,
                                    error=result.is_error, emit=self.emit)
            self.finish(message, part, result.output + said, error=result.is_error)

    async def _watched(self, tool: Tool, args: BaseModel, ctx: ToolContext) -> ToolResult:
        """Run the call; one that may change files runs between two snapshots of the work
        tree, and its diff is kept on the call (totem.snapshots.calls): undo puts it back."""
        watch = self.agent.snapshots
        if watch is None:
            return await tool.run(args, ctx)
        from totem.snapshots.calls import takes_snapshots

        taken = None
        if takes_snapshots(tool.name, read_only=tool.read_only,
                           parallel=bool(getattr(tool, "parallel", False))):
            taken = await asyncio.to_thread(watch.before, self.session_id)
        try:
            return await tool.run(args, ctx)
        finally:
            if taken is not None:
                diff = await asyncio.to_thread(watch.after, taken)
                if diff:
                    from totem.tools.diffs import joined

                    ctx.meta["diff"] = self.agent.redact(joined([diff]))
                    ctx.meta["changed"] = "tree"
            elif ctx.before:
                watch.files_changed(self.session_id, ctx.before)
            for warning in watch.warnings:
                self.emit(Notice(warning, level="warning"))
            watch.warnings.clear()

    def _validated(self, tool: Tool, part: ToolPart) -> BaseModel:
        """The call's validated arguments; a ToolError when they are a copy of the schema or
        invalid."""
        from totem.tools.schema_copy import copied_schema

        raw = part.input if part.input is not None else part.raw_input
        copied_schema(raw, self.spec_of(tool))
        args = parse_arguments(tool, raw)
        part.input = args.model_dump()
        return args

    def _refuse(self, tool: Tool, part: ToolPart) -> None:
        """A ToolError when the call (its paths inside the project by now) would change an
        existing file the session has not read, or break a small model's guards."""
        assert part.input is not None
        refused = self.read_first.refusal(tool.name, part.input)
        if refused is None:
            refused = self.hold(tool.name, part.input)
        if refused is not None:
            raise ToolError(refused)

    def spec_of(self, tool: Tool) -> ToolSpec:
        """The definition of `tool` the model was shown."""
        spec = next((s for s in self.agent.specs or [] if s.name == tool.name), None)
        return spec if spec is not None else tool_spec(tool)

    @property
    def read_first(self) -> ReadFirst:
        """The files this session has read or written, from its history on first use (the
        run's copy, which holds everything stored so far: no second load from the store)."""
        if self._read_first is None:
            self._read_first = ReadFirst(self.agent.root, self.history)
        return self._read_first

    def _context(self, tool: Tool, part: ToolPart) -> ToolContext:
        return ToolContext(
            root=self.agent.root,
            session_id=self.session_id,
            call_id=part.call_id,
            abort=self.abort,
            permission=self.agent.permission,
            settings=self.agent.settings,
            snapshots=self.agent.store,
            emit=self.emit,
            tool_name=tool.name,
            questions=self.agent.questions,
            state=self.agent.state,
            vision=self.agent.profile.vision,
            meta=part.meta if part.meta is not None else {},
            asks=self.asks,
            after_write=self.agent.after_write,
            files=self.agent.files,
            terminal=self.agent.terminal,
        )

    def finish(self, message: Message, part: ToolPart, output: str, error: bool) -> None:
        output = self.agent.redact(output)
        part.title = self.agent.redact(part.title)
        if not part.meta:
            part.meta = None
        if len(output) > self.agent.settings.output_limit * 2:
            output = output[: self.agent.settings.output_limit * 2] + "\n[... truncated ...]"
        part.output = output
        part.state = "error" if error else "completed"
        self.save(message, part)
        shown = output + (" [image]" * len(part.images))
        # a failed command may have changed files too: its snapshot diff is shown
        shown_diff = not error or (part.meta or {}).get("changed") == "tree"
        diff = (part.meta or {}).get("diff", "") if shown_diff else ""
        self.emit(ToolEnd(part.call_id, part.name, shown, error, part.title, diff,
                          (part.meta or {}).get("diagnostics", "")))

    def _seen(self, part: ToolPart) -> int:
        """How many times the run has made this call with this result, this one counted."""
        signature = _signature(part)
        count = self.seen_calls.get(signature, 0) + 1
        self.seen_calls[signature] = count
        return count

    def times_seen(self, part: ToolPart) -> int:
        """How many times the run made this call with this result (it counted, once run)."""
        return self.seen_calls.get(_signature(part), 0)

    def _check_guards(self, message: Message, part: ToolPart) -> None:
        """Three refusals in a row end the run; so does the same call with the same result
        made a third time in one run (in a row or not: small models also alternate), and
        calls failing with the same error four times in a row."""
        if part.title == "denied":
            self.denials += 1
            if self.denials >= MAX_DENIALS:
                raise Stop("rejected", "Stopped: three actions in a row were rejected or denied.")
            return
        self.denials = 0
        failure = (part.name, part.output) if part.state == "error" else None
        self.failures = self.failures + 1 if failure and failure == self.last_failure else 1
        self.last_failure = failure
        if failure and self.failures >= SAME_FAILURE_LIMIT:
            raise Stop("repeat")
        count = self._seen(part)
        if count >= REPEAT_LIMIT:
            raise Stop("repeat")
        if count == REPEAT_LIMIT - 1:
            part.output += REPEAT_HINT
            self.save(message, part)
