"""The loop: the only place that sequences a run.

    run(text)  -> append the user message, then repeat step() until it says stop
    step()     -> query the model (streamed into parts), then execute its tool calls
    query()    -> one model call through the shared retry policy; a stream cut after output
                  is asked again in a new message, the cut one kept, marked interrupted
    execute()  -> permission + run for each call; read-only calls of a step run together

A run ends with exactly one `RunFinished`: the model answered (finished), a limit was reached
(step_limit, repeat: then one last call *without tools* gives a closing answer), three
actions in a row were refused (rejected), the person aborted, or the provider failed for good.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from totem.abort import Aborted, AbortSignal
from totem.events import (
    AgentEvent,
    Event,
    FinishReason,
    Notice,
    RunFinished,
    RunStarted,
    StepFinished,
)
from totem.messages import (
    INTERRUPTED,
    RETRACTED,
    ImageBlock,
    Message,
    NoticePart,
    SummaryPart,
    TextPart,
    ToolPart,
    Usage,
    new_id,
)
from totem.providers.base import (
    ModelRequest,
    ProviderError,
    RetryableError,
    StreamEvent,
    TextChunk,
    ToolSpec,
    UsageReport,
)
from totem.providers.catalog.catalogue import cost
from totem.providers.localserver.stepmode import schema_option, step_request
from totem.providers.localserver.textsteps import text_steps
from totem.providers.transport.overflow import context_overflow, window_in_error
from totem.providers.transport.retry import stream_with_retry
from totem.run.agent import Agent, CacheClock
from totem.run.assist import GO_ON, AheadCall, NoAssist, RunAssist
from totem.run.callguard import CallGuard, guard_calls
from totem.run.compaction import (
    Compactor,
    Plan,
    context_note,
    estimate,
    summary_instruction,
    summary_request_text,
    transcript,
)
from totem.run.execute import ABORTED_OUTPUT, Stop, ToolRunner
from totem.run.pacing import take_turn
from totem.run.recorder import StepRecorder
from totem.run.textcalls import params_of, parse_text_tool_calls
from totem.run.user_hooks import StopHooks
from totem.tools.base import is_offered, tool_spec

if TYPE_CHECKING:
    from totem.providers.localserver.sampling import Sampling

__all__ = ["Agent", "Run", "run_events"]

MAX_CONTINUATIONS = 3
DEFAULT_SUMMARY_BUDGET = 32_000  # tokens of transcript for a summary when the window is unknown
# the most a summary may be: compact.txt asks for under 400 words; the 1.5B, asked so, wrote
# 791 (the test failures copied in), about 200 s of a CPU's time, and its try was killed
SUMMARY_MAX_TOKENS = 800
LIMIT_NOTE = (
    "You have reached the limit of steps for this request. Do not call any tool. Answer now: "
    "what you did, what you found, and what remains to be done."
)
CUT_CALL_OUTPUT = "Not run: the connection was lost before the answer was complete."
MIN_ANSWER_TOKENS = 256  # asked for even when the window is nearly full
SERVER_FAILED_OUTPUT = "[The model server failed while this call was being written]"
REPEAT_NOTE = (
    "You are repeating the same tool call and getting the same result. Do not call any tool. "
    "Answer now with what you have."
)


def _change_notice(*, new: set[str] | frozenset[str], gone: set[str] | frozenset[str]) -> str:
    parts = [f"{label}: {', '.join(sorted(names))}"
             for label, names in (("new", new), ("gone", gone)) if names]
    return f"The tools changed ({'; '.join(parts)})." if parts else "The tools changed."


class Run:
    def __init__(
        self,
        agent: Agent,
        session_id: str,
        *,
        emit: Callable[[Event], None],
        abort: AbortSignal,
        nested: bool = False,
        asks: Callable[[Event], None] | None = None,
    ) -> None:
        self.agent = agent
        self.session_id = session_id
        self._emit = emit
        # Where questions go: this run's own stream; a sub-agent's are asked in the
        # session's stream (`asks`), unwrapped, and answered as usual.
        self.asks = asks if asks is not None else emit
        self.abort = abort
        self.nested = nested
        self.history = agent.store.messages(session_id)
        self.runner = ToolRunner(agent, session_id, emit=self.emit, abort=abort, save=self._save,
                                 history=self.history, asks=self.asks)
        self.tools = self.runner.tools
        self.specs = agent.specs or [tool_spec(t) for t in agent.tools]
        self.usage = Usage()
        self.steps = 0
        self.rounds = 0
        self.current: StepRecorder | None = None
        self.in_flight: ModelRequest | None = None  # the request of the answer streaming now
        self.compactor = Compactor(
            window=agent.context_window,
            reserve=agent.sampling.max_tokens or agent.profile.max_output or 4_096,
        )
        self.shortened_shown = (0, 0)  # the (shortened, dropped) last told
        self.cost: float | None = None
        self.first = len(self.history)  # where this run's messages start
        self.dropped_note = ""  # for the model, after the step's calls ran
        # what this run gets beyond the loop for its kind of model (run/assist.py)
        self.assist: RunAssist = agent.assist(self) if agent.assist else NoAssist()
        self.runner.hold = self.assist.refusal
        self.stop_hooks = StopHooks(agent, session_id, emit=self.emit, nested=nested)

    @property
    def root(self) -> Path:
        return self.agent.root

    @property
    def system(self) -> str:
        return self.agent.system

    @property
    def sampling(self) -> Sampling:
        return self.agent.sampling

    def emit(self, event: Event) -> None:
        """Pass `event` on; a sub-agent's end adds its tokens and cost to this run's."""
        if isinstance(event, AgentEvent) and isinstance(event.event, RunFinished):
            self.usage.add(event.event.usage)
            if event.event.cost is not None:
                self.cost = (self.cost or 0.0) + event.event.cost
        self._emit(event)

    # the run ------------------------------------------------------------------------------

    async def __call__(
        self, text: str, *, model_text: str | None = None, images: list[ImageBlock] | None = None
    ) -> RunFinished:
        user = self._add_message("user")
        self._append_part(user, TextPart(text, model_text=model_text, images=list(images or [])))
        self.emit(RunStarted(self.session_id, user.id, self.agent.label))
        try:
            await self._prepare()
            await self.assist.before_first_step()
            reason, detail = await self._loop()
        except Stop as stop:  # in a call the assist made (make_calls)
            reason, detail = await self._stopped(stop, None)
        except (Aborted, asyncio.CancelledError):
            if not self.abort.aborted:
                raise
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            reason, detail = "aborted", self.abort.reason
            self._interrupt()
        except ProviderError as exc:
            reason, detail = "error", self._provider_failure(exc)
        finished = RunFinished(reason, detail, self.steps, self.usage, self.cost)
        self.emit(finished)
        return finished

    async def _prepare(self) -> None:
        """Add the tools that come into being with the run (MCP, a knowledge pack's), in the
        agent's order; a sub-agent gets none."""
        if self.nested:
            return
        for prepare in self.agent.preparers:
            for tool in await prepare(self.asks):
                if tool.name not in self.tools:
                    self.tools[tool.name] = tool
                    if is_offered(tool):
                        self.specs = [*self.specs, tool_spec(tool)]

    async def _refresh(self) -> None:
        """Tools that changed since the last step (a server's new list) replace the old."""
        if self.nested:
            return
        for refresh in self.agent.refreshers:
            change = await refresh()
            if change is None:
                continue
            for name in change.removed:
                self.tools.pop(name, None)
            self.tools.update({tool.name: tool for tool in change.added})
            shown = {s.name for s in self.specs} & change.removed
            offered = [tool for tool in change.added if is_offered(tool)]
            now = {tool.name for tool in offered}
            self.specs = [*(s for s in self.specs if s.name not in change.removed | now),
                          *(tool_spec(tool) for tool in offered)]
            self.emit(Notice(_change_notice(new=now - shown, gone=shown - now)))

    async def make_calls(self, calls: Sequence[AheadCall]) -> list[ToolPart]:
        """Make `calls` for the model, in a message of their own, like calls it made."""
        message = self._add_message("assistant")
        parts = []
        for call in calls:
            part = ToolPart(call_id=new_id("call"), name=call.name, input=dict(call.args),
                            raw_input=json.dumps(call.args))
            self._append_part(message, part)
            parts.append(part)
        message.finish = "tool_calls"
        self.agent.store.finish_message(message)
        # they count as the model's own: a step of the budget, and for the repeat guard
        # (the same test run made again and again ends the run as the model's would)
        self.steps += 1
        await self.runner.execute(message, parts)
        return parts

    async def ask_schema(self, system: str, text: str, schema: dict[str, Any]) -> str:
        """One request outside the conversation, its answer held to `schema` (where the
        server constrains output): the text of the answer. Its tokens count for the run."""
        request = ModelRequest(
            model=self.agent.model, system=system,
            messages=[Message(new_id("msg"), self.session_id, "user", [TextPart(text)])],
            max_tokens=self.agent.sampling.max_tokens, temperature=self.agent.sampling.temperature,
            options=schema_option(self.agent.sampling.engine, schema),
        )
        answer: list[str] = []
        usage = Usage()
        async for event in stream_with_retry(
            lambda: self.agent.provider.stream(request), abort=self.abort, on_retry=self._on_retry
        ):
            if isinstance(event, TextChunk):
                answer.append(event.text)
            elif isinstance(event, UsageReport):
                usage = event.usage
        self.usage.add(usage)
        return "".join(answer)

    async def _loop(self) -> tuple[FinishReason, str]:
        continuations = 0
        while True:
            if self.steps >= self.agent.max_steps or self.rounds >= self.agent.max_rounds:
                return await self._closing("step_limit", LIMIT_NOTE)
            await self._refresh()
            self.steps += 1
            message, calls = await self._query(self.specs)
            if not calls:
                if message.finish == "length" and continuations < MAX_CONTINUATIONS:
                    continuations += 1
                    self.synthetic_user("Continue.")
                    continue
                if message.finish == "length":
                    return self._truncated(message, continuations)
                outcome = await self.assist.after_answer(message)
                if outcome is None:
                    if await self.stop_hooks.keep_going(message, self.synthetic_user):
                        continue
                    return "finished", ""
                if outcome[0] == GO_ON:
                    continue
                reason, detail = outcome
                self._note(message, detail, "warning")
                return cast(FinishReason, reason), detail
            try:
                await self.runner.execute(message, calls)
                await self.assist.after_calls(calls)
                if self.dropped_note:
                    self.synthetic_user(self.dropped_note)
                    self.dropped_note = ""
            except Stop as stop:
                return await self._stopped(stop, message)

    async def _stopped(self, stop: Stop, message: Message | None
                       ) -> tuple[FinishReason, str]:
        """How the run ends after a guard stopped it: a closing answer after repeats, else
        the guard's reason, noted on `message` (or told, when the stop came outside a step)."""
        if stop.reason == "repeat":
            return await self._closing("repeat", REPEAT_NOTE)
        if message is not None:
            self._note(message, stop.detail, "warning")
        elif stop.detail:
            self.emit(Notice(stop.detail, "warning"))
        return stop.reason, stop.detail

    def _truncated(self, message: Message, continuations: int) -> tuple[FinishReason, str]:
        """The answer still hit the output limit after asking it to continue: say so."""
        detail = (f"The answer is still cut at the model's output limit after {continuations} "
                  "requests to continue; it is incomplete.")
        self.emit(Notice(detail, "warning"))
        self._note(message, detail, "warning")
        return "truncated", detail

    async def _closing(self, reason: FinishReason, note: str) -> tuple[FinishReason, str]:
        """A limit was reached while the model wanted tools: one last call without tools."""
        detail = {
            "step_limit": f"Reached the step limit ({self.agent.max_steps} steps).",
            "repeat": "The model kept repeating the same call with the same result.",
        }.get(reason, note)
        self.emit(Notice(detail + " Asking for a closing answer without tools.", "warning"))
        request = self.request_text()
        if request:  # small models answer better when the question is right there
            note += f"\n\nThe request was: {request}\nAnswer it in plain sentences, not JSON."
        self.synthetic_user(note)
        message, _ = await self._query([], flat=True)
        self._note(message, detail, "warning")
        return reason, detail

    def _flat(self) -> list[Message]:
        """The conversation as one plain-text message, tool calls and results written out:
        for the closing call, where a model shown its own tool calls (small ones above all)
        tends to answer with one more call instead of words."""
        budget = (self.compactor.budget or DEFAULT_SUMMARY_BUDGET) * 3  # chars, with room
        text = transcript(self.history, max_chars=budget)
        return [Message(new_id("msg"), self.session_id, "user", [TextPart(text)])]

    def request_text(self) -> str:
        """What the person asked in this run (the latest text they typed)."""
        for message in reversed(self.history):
            for part in message.parts:
                if isinstance(part, TextPart) and message.role == "user" and not part.synthetic:
                    text = part.sent
                    return text.strip()[:2000]
        return ""

    # query --------------------------------------------------------------------------------

    async def _derive(self, specs: list[ToolSpec]) -> list[Message]:
        """The messages for the next request, kept under the window."""
        plan = self.compactor.plan(self.history, system=self.agent.system, specs=specs)
        if plan.needs_summary:
            await self._summarize(plan)
            plan = self.compactor.plan(self.history, system=self.agent.system, specs=specs)
            if plan.needs_summary:  # one summary per request; then cut what remains
                plan = self.compactor.last_resort(plan, system=self.agent.system, specs=specs)
        said = (plan.shortened, plan.dropped)
        if any(said) and said != self.shortened_shown:
            self.shortened_shown = said
            self.emit(Notice(f"Context: {context_note(plan)} to fit the model's window (the "
                             "stored history is unchanged)."))
        return plan.messages

    async def _summarize(self, plan: Plan) -> None:
        instruction = summary_instruction()
        budget = self.compactor.budget or DEFAULT_SUMMARY_BUDGET
        found = summary_request_text(plan, instruction=instruction, budget=budget)
        if found is None:
            return
        covers, text = found
        record = self._add_message("assistant")
        note = f"{instruction}\n\n[transcript of {plan.cut} earlier messages, {len(text)} chars]"
        self._append_part(record, SummaryPart("request", note, covers))
        self.emit(Notice(f"Compacting: summarizing {plan.cut} earlier messages."))
        request = ModelRequest(
            model=self.agent.model,
            system=instruction,
            messages=[Message(new_id("msg"), self.session_id, "user", [TextPart(text)])],
            max_tokens=min(self.agent.sampling.max_tokens or SUMMARY_MAX_TOKENS,
                           SUMMARY_MAX_TOKENS),
            temperature=self.agent.sampling.temperature,
        )
        summary = ""
        async for event in stream_with_retry(
            lambda: self.agent.provider.stream(request), abort=self.abort, on_retry=self._on_retry
        ):
            if isinstance(event, TextChunk):
                summary += event.text
            elif isinstance(event, UsageReport):
                record.usage = event.usage
        self.usage.add(record.usage)
        self._append_part(record, SummaryPart("summary", summary.strip() or text[-4000:], covers))
        self.agent.store.finish_message(record)
        self.compactor.shortened_until = 0
        self.emit(Notice("Compacted: older turns are now a summary (the stored history is kept)."))

    async def compact_now(self) -> bool:
        """`/compact`: summarize everything before the latest turn now."""
        plan = self.compactor.plan(self.history, system=self.agent.system, specs=self.specs)
        users = [i for i, m in enumerate(plan.messages) if m.role == "user" and i > 0]
        if not users:
            self.emit(Notice("Nothing to compact yet."))
            return False
        await self._summarize(Plan(plan.messages, plan.tokens, cut=users[-1], needs_summary=True))
        return True

    async def _query(
        self, specs: list[ToolSpec], *, flat: bool = False
    ) -> tuple[Message, list[ToolPart]]:
        self.abort.check()
        await take_turn()  # other runs and the server's requests between two steps
        self.abort.check()
        self.rounds += 1
        clock = self.agent.state.existing(CacheClock)
        if clock is not None and clock.until and time.time() > clock.until:
            clock.until = 0.0
            self.emit(Notice("The prompt cache has expired: this request writes it again."))
        request = self._request(self._flat() if flat else await self._derive(specs), specs)
        recorder = self._recorder()
        guard = self._guard()
        recovered: set[str] = set()
        while True:
            try:
                recorder = await self._stream(request, recorder, guard)
                break
            except ProviderError as exc:
                request = await self._recover(exc, request, recovered,
                                              partial=bool(recorder.message.parts), flat=flat)
            if recorder.message.parts:  # the failed answer had begun: it stays, closed
                self._abandon(recorder.message, recorder)
                recorder = self._recorder()
                guard = self._guard()
        message = recorder.message
        calls = recorder.end()
        self.current = None
        self._tell_dropped(guard)
        if not calls and specs:
            calls = self._calls_from_text(message, recorder)
        self.usage.add(message.usage)
        step_cost = cost(message.usage, self.agent.price)
        if step_cost is not None:
            self.cost = (self.cost or 0.0) + step_cost
        expires = self._track_cache(message.usage)
        self.emit(
            StepFinished(self.steps, message.finish or "stop", message.usage, step_cost, expires)
        )
        return message, calls

    def _request(self, messages: list[Message], specs: list[ToolSpec]) -> ModelRequest:
        """The request of one step: bounded and calm as the model's sampling says."""
        sampling = self.agent.sampling
        room = sampling.max_tokens
        window = self.compactor.window
        if room is not None and window is not None:  # never more than the window leaves
            left = window - estimate(self.agent.system, messages, specs)
            room = max(min(room, left), MIN_ANSWER_TOKENS)
        return ModelRequest(model=self.agent.model, system=self.agent.system, messages=messages,
                            tools=specs, max_tokens=room, temperature=sampling.temperature)

    def _guard(self) -> CallGuard | None:
        sampling = self.agent.sampling
        if sampling.max_calls is None and not sampling.guard_repeats:
            return None
        return CallGuard(max_calls=sampling.max_calls, stop_on_repeat=sampling.guard_repeats)

    def _open(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The provider's stream of `request`, in step form when tool calls are constrained."""
        sampling = self.agent.sampling
        hold = self.assist.hold() if request.tools else None
        if hold is not None and hold.withheld:
            kept = [t for t in request.tools if t.name not in hold.withheld]
            request = dataclasses.replace(request, tools=kept or request.tools)
        if hold is not None and hold.temperature is not None:
            request = dataclasses.replace(request, temperature=hold.temperature)
        if sampling.constrained and request.tools:
            stepped = step_request(request, engine=sampling.engine,
                                   answer=hold.answer if hold else True,
                                   answer_now=hold.answer_now if hold else "",
                                   covers=hold.covers if hold else (),
                                   plan=self.agent.mode == "plan",
                                   not_now=hold.not_now if hold else frozenset())
            return text_steps(self.agent.provider, stepped, engine=sampling.engine,
                              answer_now=bool(hold and hold.answer_now),
                              file_lines=self._file_lines,
                              refused=lambda path: self.assist.refusal("write", {"path": path}))
        return self.agent.provider.stream(request)

    def _file_lines(self, path: str) -> int | None:
        """How many lines the project's file `path` has (None: no such text file), for the
        format a change of it is written in (providers/localserver/edit_formats.py)."""
        target = self.agent.root / path
        try:
            if not target.is_file():
                return None
            with target.open("rb") as file:
                return sum(1 for _ in file)
        except (OSError, ValueError):
            return None

    async def _stream(
        self, request: ModelRequest, recorder: StepRecorder, guard: CallGuard | None
    ) -> StepRecorder:
        """Stream the answer into `recorder`; the recorder that holds the answer at the end
        (a new one when the connection dropped mid-answer and it was asked for again)."""
        current = recorder
        asked = request

        def restart(error: RetryableError, attempt: int, delay: float) -> None:
            nonlocal current, asked
            self._cut_short(current, error, attempt=attempt, delay=delay)
            current = self._recorder()
            if guard is not None:
                guard.restart()
            if self.agent.sampling.engine is not None and asked.options.get("stream") is not False:
                # A local server that breaks off mid-answer has failed on it (a malformed
                # streamed call, say), not lost a packet: ask for the whole answer at once.
                self.emit(Notice(f"The model server failed during the answer ({error.message});"
                                 " asking again for the whole answer at once.", "warning"))
                asked = dataclasses.replace(asked, options={**asked.options, "stream": False})

        def attempt() -> AsyncIterator[StreamEvent]:  # each try guarded afresh
            self.in_flight = asked
            opened = self._open(asked)
            return guard_calls(opened, guard) if guard is not None else opened

        events = stream_with_retry(
            attempt, abort=self.abort, on_retry=self._on_retry, on_cut=restart
        )
        async for event in events:
            current.on_event(event)
        return current

    async def _recover(
        self, exc: ProviderError, request: ModelRequest, done: set[str], *, partial: bool,
        flat: bool,
    ) -> ModelRequest:
        """The request to try again after `exc`, or `exc` raised: once per step, a request
        past the window is compacted, and an answer the server broke off midway is asked
        for again whole (not streamed)."""
        if context_overflow(exc) and "overflow" not in done:
            done.add("overflow")
            sent = estimate(request.system, request.messages, request.tools)
            sizes = [window_in_error(exc.message), self.compactor.window, sent * 3 // 4]
            self.compactor.window = min(size for size in sizes if size)
            self.emit(Notice(f"The request did not fit the model's window ({exc.message}); "
                             "compacting and asking again.", "warning"))
            specs = list(request.tools)
            return self._request(self._flat() if flat else await self._derive(specs), specs)
        if isinstance(exc, RetryableError) and partial and "server" not in done:
            done.add("server")
            self.emit(Notice(f"The model server failed during the answer ({exc.message}); "
                             "asking again for the whole answer at once.", "warning"))
            return dataclasses.replace(request, options={**request.options, "stream": False})
        raise exc

    def _abandon(self, message: Message, recorder: StepRecorder) -> None:
        """Close an answer the server broke off: its calls are not run."""
        for part in recorder.end():
            self.runner.finish(message, part, SERVER_FAILED_OUTPUT, error=True)
        self.usage.add(message.usage)
        self._note(message, "The model server failed during this answer; it was asked again.",
                   "warning")

    def _tell_dropped(self, guard: CallGuard | None) -> None:
        """Say what the call guard dropped, to the person now and to the model next step."""
        if guard is None or not (guard.dropped or guard.repeated or guard.degenerate):
            return
        said = []
        if guard.degenerate:
            said.append("it kept repeating the same text and was stopped")
        if guard.repeated:
            said.append(f"{guard.repeated} repeated call(s) were dropped"
                        + (" and the answer was stopped" if guard.stopped else ""))
        if guard.dropped:
            said.append(f"only the first {guard.max_calls} calls were kept, "
                        f"{guard.dropped} more were dropped")
        text = "; ".join(said)
        self.emit(Notice(f"The model's answer: {text}.", "warning"))
        self.dropped_note = (f"Note: in your last answer {text}. Make one call at a time, "
                             "never the same call twice; answer when you have what you need.")

    def _track_cache(self, usage: Usage) -> float | None:
        """When the provider's prompt cache, written or read by this step, expires."""
        if self.agent.cache_ttl is None or not (usage.cache_read or usage.cache_write):
            return None
        self.agent.state.service(CacheClock).until = time.time() + self.agent.cache_ttl
        return self.agent.state.service(CacheClock).until

    def _calls_from_text(self, message: Message, recorder: StepRecorder) -> list[ToolPart]:
        if not self.agent.profile.text_tool_calls:
            return []
        params = params_of({s.name: s.parameters for s in self.specs})
        found = parse_text_tool_calls(message.text(), set(self.tools), params=params)
        parts = []
        for name, args in found:
            part = ToolPart(
                call_id=new_id("call"),
                name=name,
                input=args,
                raw_input=json.dumps(args),
                from_text=True,
            )
            self._append_part(message, part)
            parts.append(part)
        if parts:
            names = ", ".join(p.name for p in parts)
            self.emit(Notice(f"The model wrote a tool call as text ({names}); totem runs it."))
        return parts

    def _recorder(self) -> StepRecorder:
        """A new assistant message, and the recorder that streams the answer into it."""
        recorder = StepRecorder(
            self._add_message("assistant"),
            store=self.agent.store,
            emit=self.emit,
            thinks_inline=self.agent.profile.thinks_inline,
        )
        self.current = recorder
        return recorder

    def _cut_short(
        self, recorder: StepRecorder, error: RetryableError, *, attempt: int, delay: float
    ) -> None:
        """The connection dropped mid-answer and the answer is asked for again: what came
        stays stored, marked interrupted (shown as cut, never sent to the model); a call
        in it is not run; the person is told that the answer starts again."""
        recorder.finish = INTERRUPTED
        message = recorder.message
        for part in recorder.end():
            part.state, part.output = "error", CUT_CALL_OUTPUT
            self._save(message, part)
        self.usage.add(message.usage)
        self._note(message, f"Connection lost mid-answer ({error.message}); this answer "
                   "is incomplete and was asked for again.", "warning")
        self.emit(Notice(f"Connection lost mid-answer; retrying in {delay:.1f} s "
                         f"(try {attempt + 1}). The answer starts again.", "warning"))

    def _on_retry(self, error: RetryableError, attempt: int, delay: float) -> None:
        self.emit(Notice(f"{error.message} — retrying in {delay:.1f} s (try {attempt + 1}).",
                         "warning"))

    # store helpers ------------------------------------------------------------------------

    def _add_message(self, role: str) -> Message:
        assert role in ("user", "assistant")
        message = Message(
            id=new_id("msg"),
            session_id=self.session_id,
            role="user" if role == "user" else "assistant",
            model=self.agent.label if role == "assistant" else None,
        )
        self.agent.store.add_message(message)
        self.history.append(message)
        return message

    def _append_part(
        self, message: Message, part: TextPart | ToolPart | NoticePart | SummaryPart
    ) -> None:
        message.parts.append(part)
        self.agent.store.save_part(message.id, len(message.parts) - 1, part)

    def _save(self, message: Message, part: ToolPart) -> None:
        index = next(i for i, p in enumerate(message.parts) if p is part)
        self.agent.store.save_part(message.id, index, part)

    def synthetic_user(self, text: str) -> None:
        self._append_part(self._add_message("user"), TextPart(text, synthetic=True))

    def retract(self, message: Message, note: str) -> None:
        """A step taken back (run/assist.py): stored and shown with `note`, never sent to
        the model again."""
        message.finish = RETRACTED
        self.agent.store.finish_message(message)
        self._note(message, note, "info")
        self.emit(Notice(note))

    def _note(self, message: Message, text: str,
              level: Literal["info", "warning", "error"]) -> None:
        self._append_part(message, NoticePart(text, level))

    def _interrupt(self) -> None:
        """After an abort: keep what was streamed, close every unfinished tool part; the
        answer cut short counts its tokens (estimated: its server never said them)."""
        if self.current is not None:
            self.current.end()
            self._count_cut_answer(self.current.message)
        last = self.history[-1]
        for part in last.parts:
            if isinstance(part, ToolPart) and part.state in ("pending", "running"):
                self.runner.finish(last, part, ABORTED_OUTPUT, error=True)
        self._note(last, "Aborted by the user.", "warning")

    def _count_cut_answer(self, message: Message) -> None:
        """An answer stopped mid-stream gets no usage from its server; its request was read
        and its text written all the same: both are counted, estimated as characters / 4."""
        request = self.in_flight
        if request is None or message.usage != Usage():
            return
        spent = Usage(input=estimate(request.system, request.messages, request.tools),
                      output=estimate("", [message], []))
        message.usage = spent
        self.usage.add(spent)
        self.agent.store.finish_message(message)

    def _provider_failure(self, exc: ProviderError) -> str:
        if self.current is not None:
            self.current.end()
            self.current = None
        detail = f"The model provider failed: {exc.message}"
        self._note(self.history[-1], detail, "error")
        return detail


async def run_events(
    agent: Agent,
    session_id: str,
    text: str,
    *,
    abort: AbortSignal,
    model_text: str | None = None,
    images: list[ImageBlock] | None = None,
) -> AsyncIterator[Event]:
    """Run in a task of its own; yield its events; an abort cancels what is in progress."""
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    await take_turn()  # loading the session's history is a step too
    run = Run(agent, session_id, emit=queue.put_nowait, abort=abort)
    task = asyncio.create_task(run(text, model_text=model_text, images=images))
    task.add_done_callback(lambda _: queue.put_nowait(None))

    async def cancel_on_abort() -> None:
        await abort.wait()
        task.cancel()

    watcher = asyncio.create_task(cancel_on_abort())
    try:
        while (event := await queue.get()) is not None:
            yield event
        await task
    finally:
        watcher.cancel()
        if not task.done():
            abort.abort("the client went away")
            await asyncio.gather(task, return_exceptions=True)
