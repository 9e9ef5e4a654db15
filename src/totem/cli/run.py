"""`totem run MESSAGE`: one request, headless; the exit code says how it ended.

    0 finished   1 error   2 usage or configuration   3 a limit was reached
    4 the answer claims a change that was not made   130 aborted
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path

from totem.abort import AbortSignal
from totem.cli.exit_codes import (
    EXIT_ABORTED,
    EXIT_ERROR,
    EXIT_LIMIT,
    EXIT_OK,
    EXIT_UNVERIFIED,
    EXIT_USAGE,
)
from totem.cli.interact import answer_in_terminal
from totem.cli.lines import LineReader
from totem.cli.render import TextRenderer
from totem.events import PermissionAsked, QuestionAsked, RunFinished, event_to_dict
from totem.policy.permission import Mode
from totem.settings.config import ConfigError

__all__ = ["run_command", "exit_code"]


def exit_code(finished: RunFinished | None) -> int:
    if finished is None:
        return EXIT_ERROR
    return {
        "finished": EXIT_OK,
        "aborted": EXIT_ABORTED,
        "error": EXIT_ERROR,
        "unverified": EXIT_UNVERIFIED,
    }.get(finished.reason, EXIT_LIMIT)


async def _run(args: argparse.Namespace) -> int:
    from totem.session.service import SessionService

    interactive = args.format == "text" and sys.stdin.isatty() and sys.stdout.isatty()
    mode: Mode = "yes" if args.yes else ("interactive" if interactive else "headless")
    service = SessionService(Path.cwd(), mode=mode)
    service.questions.interactive = interactive
    await service.prepare()
    model = args.run_model or args.model
    session = service.open(
        session_id=args.run_session or args.session,
        continue_last=args.run_continue or args.continue_last,
        model=model,
    )
    abort = AbortSignal()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, abort.abort)
    loop.add_signal_handler(signal.SIGTERM, abort.abort, "terminated")
    renderer = TextRenderer()
    reader: LineReader | None = None
    finished: RunFinished | None = None
    try:
        events = service.run(
            session,
            " ".join(args.message),
            abort=abort,
            model=model,
            max_steps=args.max_steps,
            agent_name=args.agent,
        )
        async for event in events:
            if args.format == "json":
                print(json.dumps(event_to_dict(event), ensure_ascii=False), flush=True)
            else:
                renderer.show(event)
            if interactive and isinstance(event, PermissionAsked | QuestionAsked):
                if reader is None:
                    reader = LineReader()
                await answer_in_terminal(event, service=service, reader=reader, abort=abort)
            if isinstance(event, RunFinished):
                finished = event
    finally:
        await service.aclose()
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)
    if args.format == "text" and finished is not None:
        print(f"session {session.id}", file=sys.stderr)
    return exit_code(finished)


def run_command(args: argparse.Namespace) -> int:
    from totem.cli.trust import settle_trust

    interactive = args.format == "text" and sys.stdin.isatty() and sys.stdout.isatty()
    try:
        settle_trust(Path.cwd().resolve(), trust=args.trust, interactive=interactive)
        return asyncio.run(_run(args))
    except ConfigError as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return EXIT_USAGE
