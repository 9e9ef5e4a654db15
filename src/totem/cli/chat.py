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
from collections.abc import Callable
from pathlib import Path

from totem.abort import AbortSignal
from totem.cli.exit_codes import EXIT_OK, EXIT_USAGE
from totem.cli.interact import answer_in_terminal
from totem.cli.lines import LineReader
from totem.cli.render import TextRenderer
from totem.events import RunFinished
from totem.messages import Usage
from totem.settings.config import ConfigError

__all__ = ["chat_command"]

HELP = (
    "/new starts a new session · /compact summarizes older turns · /exit leaves · "
    "Ctrl-C stops the current answer · @server:uri attaches an MCP resource · "
    "/server:prompt sends an MCP server's prompt (Tab completes both)"
)


def _token_line(
    usage: Usage, steps: int, model: str, cost: float | None, total: float | None
) -> str:
    cached = f" ({usage.cache_read:,} cached)" if usage.cache_read else ""
    money = f" · ${cost:.4f} (session ${total:.4f})" if cost is not None and total else ""
    return f"── {usage.input:,} in{cached} · {usage.output:,} out{money} · {steps} steps · {model}"


async def _chat(args: argparse.Namespace, mcp_words: list[Callable[[], list[str]]]) -> int:
    from totem import __version__
    from totem.session.service import SessionService

    service = SessionService(Path.cwd(), mode="interactive")
    await service.prepare()
    session = service.open(
        session_id=args.session, continue_last=args.continue_last, model=args.model
    )
    label = service.model_label(session, args.model)
    service.agent(label)  # fail early on a bad configuration
    print(f"totem {__version__} · {label} · {service.root}\n{HELP}")
    from totem.session.mcp_input import mcp_completions

    mcp_words.append(lambda: mcp_completions(service.toolset))
    loop = asyncio.get_running_loop()
    renderer = TextRenderer()
    reader = LineReader(bracketed_paste=True)
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
                text = await reader.read("\n› ")
            except EOFError:
                print()
                return EXIT_OK
            text = text.strip()
            if not text:
                continue
            if text in ("/exit", "/quit"):
                return EXIT_OK
            if text == "/help":
                print(HELP)
                continue
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
                session = service.open(model=label)
                print(f"new session {session.id}")
                continue
            abort = AbortSignal()
            current.append(abort)
            try:
                async for event in service.run(session, text, abort=abort, model=args.model):
                    renderer.show(event)
                    await answer_in_terminal(
                        event, service=service, reader=reader, abort=abort
                    )
                    if isinstance(event, RunFinished):
                        total = service.session_cost(session)
                        line = _token_line(event.usage, event.steps, label, event.cost, total)
                        print(line, flush=True)
            finally:
                current.clear()
    finally:
        reader.close()
        loop.remove_signal_handler(signal.SIGINT)
        await service.aclose()


def _complete_commands(root: Path, mcp_words: list[Callable[[], list[str]]]) -> None:
    """Tab completes the project's /commands (and the chat's own), and MCP resources and
    prompts (`@server:uri`, `/server:prompt`) once the chat can name them."""
    try:
        import readline
    except ImportError:
        return
    from totem.session.commands import complete, load_commands

    commands = load_commands(root)
    builtin = ["/compact", "/exit", "/help", "/new"]

    def completer(text: str, state: int) -> str | None:
        if not text.startswith(("/", "@")):
            return None
        mcp = [w for words in mcp_words for w in words() if w.startswith(text)]
        found = sorted({*complete(text, commands), *(b for b in builtin if b.startswith(text)),
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
