"""One editor session: its `SessionService` (the same agent, tools, permissions, trust and
store as `totem`), its stored session, the run of its current prompt, and its choices.

A prompt runs the service's events to the end, sending each as session updates; a
permission question waits for the editor's answer (`permissions.py`), a question of the ask
tool is offered the same way, its options as the buttons; `cancel` aborts the run, which then
ends with the stop reason "cancelled". A plan-mode answer's plan is offered for approval
(`plan.py`); approved, it is carried out in the same prompt, in the mode chosen. The
editor's file system and terminal are used when the client offers them (`files.py`,
`terminal.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from acp import RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    PermissionOption,
    PromptResponse,
    StopReason,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallProgress,
    ToolCallUpdate,
    Usage,
    UsageUpdate,
    UserMessageChunk,
)

from totem.abort import AbortSignal
from totem.acp.choices import config_options, mode_state, models_of, modes_of
from totem.acp.files import ClientFiles
from totem.acp.history import replay
from totem.acp.permissions import ask_editor
from totem.acp.plan import approve_in_editor
from totem.acp.prompt import Block, request_from
from totem.acp.terminal import ClientTerminal
from totem.acp.updates import Update, notice_text, translate
from totem.events import (
    AgentEvent,
    Event,
    Notice,
    PermissionAsked,
    PlanProposed,
    QuestionAsked,
    RunFinished,
    StepFinished,
    ToolEnd,
    ToolStart,
)
from totem.messages import Usage as TotemUsage
from totem.policy.modes import mode_of
from totem.policy.permission import Reply
from totem.settings.config import ConfigError

if TYPE_CHECKING:
    from acp.schema import (
        SessionConfigOptionBoolean,
        SessionConfigOptionSelect,
        SessionModeState,
    )

    from totem.session.service import SessionService
    from totem.store.base import SessionInfo

__all__ = ["EditorSession", "stop_reason"]

_STOPS: dict[str, StopReason] = {
    "finished": "end_turn", "aborted": "cancelled", "step_limit": "max_turn_requests",
    "truncated": "max_tokens",
}


def stop_reason(finished: RunFinished | None) -> StopReason:
    return _STOPS.get(finished.reason, "end_turn") if finished is not None else "end_turn"


def _usage(usage: TotemUsage) -> Usage:
    return Usage(total_tokens=usage.input + usage.output, input_tokens=usage.input,
                 output_tokens=usage.output, thought_tokens=usage.reasoning or None,
                 cached_read_tokens=usage.cache_read or None,
                 cached_write_tokens=usage.cache_write or None)


class EditorSession:
    def __init__(self, *, client: Client, service: SessionService, info: SessionInfo,
                 capabilities: ClientCapabilities | None) -> None:
        self.client = client
        self.service = service
        self.info = info
        self.root = service.root
        self.abort: AbortSignal | None = None
        self.model: str | None = None  # chosen in the editor; None: the session's own
        self.modes = modes_of(service.modes())
        self._open: dict[str, str] = {}  # tool calls started and not ended: id -> tool name
        self._shown: dict[str, asyncio.Event] = {}  # tool calls the editor has been told of
        self._plans = 0  # plans offered for approval (each one's tool call has its own id)
        fs = capabilities.fs if capabilities is not None else None
        if fs is not None and (fs.read_text_file or fs.write_text_file):
            service.files = ClientFiles(client, info.id, read=bool(fs.read_text_file),
                                        write=bool(fs.write_text_file))
        if capabilities is not None and capabilities.terminal:
            service.terminal = ClientTerminal(client, info.id, shell=service.config.tools.shell,
                                              show=self._show_terminal)

    # choices ---------------------------------------------------------------------------------

    @property
    def current_model(self) -> str:
        return self.service.model_label(self.info, self.model)

    @property
    def mode(self) -> str:
        return self.service.mode(self.info.id)

    def mode_state(self) -> SessionModeState:
        return mode_state(self.modes, self.mode)

    def config_options(self) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
        models = models_of(self.service.config, self.current_model)
        return config_options(self.modes, self.mode, models, self.current_model)

    def set_mode(self, mode_id: str) -> None:
        if mode_id not in {m.id for m in self.modes}:
            known = ", ".join(m.id for m in self.modes)
            raise RequestError.invalid_params({"modeId": f"no mode '{mode_id}' ({known})"})
        self.service.set_mode(self.info.id, mode_of(mode_id))

    def set_model(self, spec: str) -> None:
        if spec not in models_of(self.service.config, self.current_model):
            raise RequestError.invalid_params({"value": f"no configured model '{spec}'"})
        self.model = spec

    # updates ---------------------------------------------------------------------------------

    async def send(self, update: Update | UserMessageChunk | UsageUpdate | CurrentModeUpdate
                   | ConfigOptionUpdate) -> None:
        await self.client.session_update(session_id=self.info.id, update=update)

    async def say(self, text: str, level: str = "info") -> None:
        notice = Notice(text, "error" if level == "error" else "warning")
        await self.send(AgentMessageChunk(session_update="agent_message_chunk",
                                          content=TextContentBlock(type="text",
                                                                   text=notice_text(notice))))

    async def replay(self) -> None:
        """The stored conversation, sent to the editor as it was (session/load)."""
        for update in replay(self.service.store.messages(self.info.id), self.root):
            await self.send(update)

    async def _show_terminal(self, call_id: str, terminal_id: str) -> None:
        """Attach a terminal to its tool call, once the editor knows the call."""
        shown = self._shown.setdefault(call_id, asyncio.Event())
        await shown.wait()
        await self.send(ToolCallProgress(
            session_update="tool_call_update", tool_call_id=call_id,
            content=[TerminalToolCallContent(type="terminal", terminal_id=terminal_id)]))

    # the prompt ------------------------------------------------------------------------------

    def cancel(self) -> None:
        if self.abort is not None:
            self.abort.abort("cancelled in the editor")

    async def prompt(self, blocks: list[Block]) -> PromptResponse:
        if self.abort is not None:
            raise RequestError.invalid_request({"reason": "a prompt is already running"})
        request = request_from(blocks, self.root, redact=self.service.redact)
        abort = self.abort = AbortSignal()
        finished: RunFinished | None = None
        try:
            finished, plan = await self._drain(self.service.run(
                self.info, request.text, abort=abort, model=self.model,
                image_blocks=request.images), abort)
            while plan is not None and not abort.aborted:
                carried = await self._carry_out(plan, abort)
                if carried is None:  # keep planning: the next prompt says what to change
                    break
                finished, plan = carried
        except ConfigError as exc:
            await self.say(str(exc), "error")
        finally:
            self.abort = None
            self._open.clear()
            self._shown.clear()
        if finished is not None and finished.reason not in ("finished", "aborted") \
                and finished.detail:
            await self.say(finished.detail, "warning")
        usage = _usage(finished.usage) if finished is not None else None
        return PromptResponse(stop_reason=stop_reason(finished), usage=usage)

    async def _drain(self, events: AsyncIterator[Event], abort: AbortSignal) -> tuple[
            RunFinished | None, PlanProposed | None]:
        """A run's events sent to the editor; how it finished, and the plan it ended with."""
        finished: RunFinished | None = None
        plan: PlanProposed | None = None
        async for event in events:
            await self._handle(event, abort)
            if isinstance(event, PlanProposed):
                plan = event
            if isinstance(event, RunFinished):
                finished = event
        return finished, plan

    async def _carry_out(self, plan: PlanProposed, abort: AbortSignal) -> tuple[
            RunFinished | None, PlanProposed | None] | None:
        """The editor's answer to a plan: carried out in the mode chosen (the editor is told
        the session left plan mode), or None to keep planning."""
        self._plans += 1
        mode = await approve_in_editor(self.client, plan, session_id=self.info.id,
                                       call_id=f"plan-{self._plans}", abort=abort)
        if mode is None:
            return None
        events = self.service.approve_plan(self.info, plan.steps, abort=abort,
                                           model=self.model, mode=mode)
        await self.send(CurrentModeUpdate(session_update="current_mode_update",
                                          current_mode_id=mode))
        await self.send(ConfigOptionUpdate(session_update="config_option_update",
                                           config_options=self.config_options()))
        return await self._drain(events, abort)

    async def _handle(self, event: Event, abort: AbortSignal) -> None:
        match event:
            case ToolStart(call_id=call_id, name=name):
                self._open[call_id] = name
            case ToolEnd(call_id=call_id):
                self._open.pop(call_id, None)
            case PermissionAsked():
                return await self._permission(event, abort)
            case QuestionAsked():
                return await self._question(event, abort)
            case StepFinished(usage=usage):
                window = self.service.context_window()
                if window:
                    used = usage.input + usage.cache_read + usage.output
                    await self.send(UsageUpdate(session_update="usage_update",
                                                used=min(used, window), size=window))
                return
            case AgentEvent():
                return  # a sub-agent's thread: its answer comes back as the task's result
            case _:
                pass
        for update in translate(event, self.root):
            await self.send(update)
        if isinstance(event, ToolStart):
            self._shown.setdefault(event.call_id, asyncio.Event()).set()

    def _call_for(self, tool: str, request_id: str) -> str:
        """The running call that asks (the latest of that tool), or an id of its own."""
        for call_id, name in reversed(self._open.items()):
            if name == tool:
                return call_id
        return f"ask-{request_id}"

    async def _permission(self, event: PermissionAsked, abort: AbortSignal) -> None:
        asking = ask_editor(self.client, event, session_id=self.info.id,
                            call_id=self._call_for(event.tool, event.request_id),
                            root=self.root, permission=self.service.permission)
        try:
            reply = await abort.until(asking)
        except Exception:  # cancelled, or the editor failed to answer: nothing is allowed
            reply = Reply("reject", "The editor gave no answer.")
        self.service.reply(event.request_id, reply)

    async def _question(self, event: QuestionAsked, abort: AbortSignal) -> None:
        """A question of the ask tool, offered as a permission request whose options are
        the answers (ACP has no question of its own); free text cannot be given there."""
        options = [PermissionOption(option_id=str(i), name=text, kind="allow_once")
                   for i, text in enumerate(event.options)]
        options.append(PermissionOption(option_id="none", name="No answer", kind="reject_once"))
        tool_call = ToolCallUpdate(tool_call_id=self._call_for("ask", event.request_id),
                                   title=event.question, kind="other")
        answer: str | None = None
        try:
            response = await abort.until(self.client.request_permission(
                options=options, session_id=self.info.id, tool_call=tool_call))
            outcome = response.outcome
            if isinstance(outcome, AllowedOutcome) and outcome.option_id.isdigit():
                answer = event.options[int(outcome.option_id)]
        except Exception:
            answer = None
        self.service.answer(event.request_id, answer)
