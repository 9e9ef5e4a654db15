"""`totem` alone: the interactive chat in the terminal.

Streams answers, collapses reasoning, shows tool calls, asks permission questions; Ctrl-C
aborts the current run and keeps the program; Ctrl-D or /exit leaves. A token line follows
each answer.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from totem.abort import AbortSignal
from totem.cli.exit_codes import EXIT_OK, EXIT_USAGE
from totem.cli.interact import answer_in_terminal
from totem.cli.lines import LineReader
from totem.cli.render import TextRenderer
from totem.events import Event, PlanProposed, RunFinished, StepFinished
from totem.messages import Usage
from totem.settings.config import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from totem.cli.chat_commands import ChatState
    from totem.session.service import SessionService

__all__ = ["chat_command"]

HELP = (
    "/new starts a new session · /compact summarizes older turns · /undo /redo the last "
    "request's files · /model switches · /sessions resumes one · @path attaches a file · "
    "@server:uri attaches an MCP resource · /server:prompt sends an MCP server's prompt · "
    "Shift-Tab cycles normal / plan / accept edits · /plan [text] plans first · "
    "/exit leaves · Ctrl-C stops the current answer"
)


def _token_line(
    usage: Usage, steps: int, model: str, cost: float | None, total: float | None,
    *, context: str = "",
) -> str:
    cached = f" ({usage.cache_read:,} cached)" if usage.cache_read else ""
    money = f" · ${cost:.4f} (session ${total:.4f})" if cost is not None and total else ""
    return (f"── {usage.input:,} in{cached} · {usage.output:,} out{money} · {steps} steps · "
            f"{model}{context}")


def _context_line(last: Usage | None, window: int | None) -> str:
    """' · context 12% of 128,000': what the last request took of the model's window."""
    if last is None or not window:
        return ""
    used = last.input + last.output
    return f" · context {100 * used / window:.0f}% of {window:,}"


async def _chat(args: argparse.Namespace, mcp_words: list[Callable[[], list[str]]]) -> int:
    from totem import __version__
    from totem.session.service import SessionService

    service = SessionService(Path.cwd(), mode="interactive")
    if getattr(args, "sandbox", None):
        service.config.tools.sandbox.mode = args.sandbox
    await service.prepare()
    session = service.open(
        session_id=args.session, continue_last=args.continue_last, model=args.model
    )
    label = service.model_label(session, args.model)
    service.agent(label)  # fail early on a bad configuration
    print(f"totem {__version__} · {label} · {service.root}\n{HELP}")
    from totem.cli.chat_commands import MODEL_CHOICES, ChatState, handle_local, model_choices
    from totem.cli.chat_modes import (
        bind_shift_tab,
        cycle,
        mode_line,
        prefill,
        prompt_for,
        split_cycle,
    )
    from totem.session.mcp_input import mcp_completions

    mcp_words.append(lambda: mcp_completions(service.toolset))
    chat = ChatState(session=session, model=args.model, label=label)
    MODEL_CHOICES[:] = model_choices(service)
    loop = asyncio.get_running_loop()
    renderer = TextRenderer(markdown=True)
    reader = LineReader(bracketed_paste=True)
    bind_shift_tab()
    current: list[AbortSignal] = []

    def on_sigint() -> None:
        if current:
            current[-1].abort()
        else:
            print("\n(Ctrl-D or /exit to leave)", flush=True)

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        while True:
            try:
                text = await reader.read(prompt_for(service.mode(chat.session.id)))
            except EOFError:
                print()
                return EXIT_OK
            presses, text = split_cycle(text)
            if presses:  # Shift-Tab: the next mode; what was typed stays on the line
                mode = cycle(service.mode(chat.session.id), presses)
                service.set_mode(chat.session.id, mode)
                print(mode_line(mode), flush=True)
                prefill(text)
                continue
            text = text.strip()
            if text == "/plan" or text.startswith("/plan "):
                service.set_mode(chat.session.id, "plan")
                text = text[len("/plan"):].strip()
                if not text:
                    print(mode_line("plan"), flush=True)
                    continue
            if not text:
                continue
            if text in ("/exit", "/quit"):
                return EXIT_OK
            if text == "/help":
                print(HELP)
                continue
            if await handle_local(text, service=service, state=chat, reader=reader):
                continue
            session, label = chat.session, chat.label
            if text == "/compact":
                abort = AbortSignal()
                current.append(abort)
                try:
                    for event in await service.compact(session, abort=abort):
                        renderer.show(event)
                finally:
                    current.clear()
                continue
            if text == "/new":
                chat.session = session = service.open(model=label)
                print(f"new session {session.id}")
                continue
            abort = AbortSignal()
            current.append(abort)
            try:
                await _turns(text, service=service, chat=chat, renderer=renderer,
                             reader=reader, abort=abort)
            finally:
                current.clear()
    finally:
        reader.close()
        loop.remove_signal_handler(signal.SIGINT)
        await service.aclose()


async def _turns(
    text: str, *, service: SessionService, chat: ChatState, renderer: TextRenderer,
    reader: LineReader, abort: AbortSignal,
) -> None:
    """A request; when it ends with a plan, the person's answer to it: approved (or
    edited), the session carries it out in the normal mode, and so on."""
    from totem.cli.chat_modes import ask_plan

    try:
        plan = await _turn(service.run(chat.session, text, abort=abort, model=chat.model),
                           service=service, chat=chat, renderer=renderer, reader=reader,
                           abort=abort)
        while plan is not None and not abort.aborted:
            steps = await ask_plan(plan, reader)
            if steps is None:
                return
            plan = await _turn(service.approve_plan(chat.session, steps, abort=abort,
                                                    model=chat.model),
                               service=service, chat=chat, renderer=renderer, reader=reader,
                               abort=abort)
    except ConfigError as exc:  # an attachment the model cannot take, an unknown agent...
        print(f"totem: {exc}", flush=True)


async def _turn(
    events: AsyncIterator[Event], *, service: SessionService, chat: ChatState,
    renderer: TextRenderer, reader: LineReader, abort: AbortSignal,
) -> PlanProposed | None:
    """One request: its events shown, its questions asked, then the token line; the plan
    it ended with, in plan mode."""
    last: Usage | None = None
    plan: PlanProposed | None = None
    async for event in events:
        if isinstance(event, PlanProposed):
            plan = event
        renderer.show(event)
        await answer_in_terminal(event, service=service, reader=reader, abort=abort)
        if isinstance(event, StepFinished):
            last = event.usage
        if isinstance(event, RunFinished):
            total = service.session_cost(chat.session)
            context = _context_line(last, service.context_window())
            print(_token_line(event.usage, event.steps, chat.label, event.cost, total,
                              context=context), flush=True)
    return plan


def _complete_commands(root: Path, mcp_words: list[Callable[[], list[str]]]) -> None:
    """Tab completes the project's /commands (and the chat's own), paths after @, models
    after /model, and MCP resources and prompts (`@server:uri`, `/server:prompt`) once the
    chat can name them."""
    try:
        import readline
    except ImportError:
        return
    from totem.session.commands import complete, load_commands

    commands = load_commands(root)
    from totem.cli.chat_commands import LOCAL_COMMANDS

    builtin = ["/compact", "/exit", "/help", "/new", *LOCAL_COMMANDS]

    def completer(text: str, state: int) -> str | None:
        from totem.cli.chat_commands import complete_word

        mcp = [w for words in mcp_words for w in words() if w.startswith(text)]
        if text.startswith("/"):
            found = sorted({*complete(text, commands),
                            *(b for b in builtin if b.startswith(text)), *mcp})
        else:
            found = sorted({*complete_word(text, line=readline.get_line_buffer(), root=root),
                            *mcp})
        return found[state] if state < len(found) else None

    readline.set_completer_delims(" \t\n")
    readline.set_completer(completer)
    readline.parse_and_bind("tab: complete")


def chat_command(args: argparse.Namespace) -> int:
    from totem.cli.trust import settle_trust

    mcp_words: list[Callable[[], list[str]]] = []
    _complete_commands(Path.cwd(), mcp_words)
    try:
        settle_trust(Path.cwd().resolve(), trust=False, interactive=sys.stdin.isatty())
        return asyncio.run(_chat(args, mcp_words))
    except ConfigError as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return EXIT_USAGE
