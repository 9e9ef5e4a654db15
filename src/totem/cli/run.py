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
from totem.cli.headless import Budget, ResultCollector, message_from, stdin_bytes
from totem.cli.interact import answer_in_terminal
from totem.cli.lines import LineReader
from totem.cli.render import TextRenderer
from totem.events import (
    Event,
    Notice,
    PermissionAsked,
    QuestionAsked,
    RunFinished,
    event_to_dict,
)
from totem.policy.permission import Mode
from totem.settings.config import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from totem.session.service import SessionService
    from totem.store.base import SessionInfo

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
    service.permission.person = interactive  # --yes leaves a command outside the sandbox to it
    sandbox = getattr(args, "run_sandbox", None) or getattr(args, "sandbox", None)
    if sandbox:
        service.config.tools.sandbox.mode = sandbox
    await service.prepare()
    model = args.run_model or args.model
    try:
        message, said = message_from(args.message, stdin_bytes())
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if said:
        print(f"totem: {said}", file=sys.stderr)
    session = _session(service, args, model)
    abort = AbortSignal()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, abort.abort)
    loop.add_signal_handler(signal.SIGTERM, abort.abort, "terminated")
    renderer = TextRenderer()
    reader: LineReader | None = None
    budget = Budget(max_cost=args.max_cost, max_tokens=args.max_tokens)
    collector = ResultCollector()
    try:
        events = service.run(
            session,
            message,
            abort=abort,
            model=model,
            max_steps=args.max_steps,
            agent_name=args.agent,
            images=[Path(p) for p in args.image],
            mode="plan" if args.plan else None,
        )
        async for event in events:
            _say(event, args.format, renderer)
            if interactive and isinstance(event, PermissionAsked | QuestionAsked):
                if reader is None:
                    reader = LineReader()
                await answer_in_terminal(event, service=service, reader=reader, abort=abort)
            collector.see(event)
            if budget.exceeded(event):
                _say(Notice(budget.reason, "warning"), args.format, renderer)
                abort.abort(budget.reason)
    finally:
        await service.aclose()
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)
    finished = collector.finished
    if args.format == "text" and finished is not None:
        print(f"session {session.id}", file=sys.stderr)
    if args.format == "json":
        _print_result(service, session, collector, budget)
    return EXIT_LIMIT if budget.reason else exit_code(finished)


def _print_result(
    service: SessionService, session: SessionInfo, collector: ResultCollector, budget: Budget
) -> None:
    """The closing `result` object of `--format json`."""
    from totem.session.undo import changed_files

    finished = collector.finished
    files = changed_files(service.store, session_id=session.id, message_id=collector.started,
                          root=service.root) if collector.started else []
    reason = "budget" if budget.reason else (finished.reason if finished else "error")
    detail = budget.reason or (finished.detail if finished else "")
    result = collector.result(session_id=session.id, files=files, reason=reason, detail=detail)
    print(json.dumps(result, ensure_ascii=False), flush=True)


def _say(event: Event, form: str, renderer: TextRenderer) -> None:
    if form == "json":
        print(json.dumps(event_to_dict(event), ensure_ascii=False), flush=True)
    else:
        renderer.show(event)


def _session(service: SessionService, args: argparse.Namespace, model: str | None) -> SessionInfo:
    """The session to run in: a new one, the latest, a given one, or a copy of one."""
    if args.fork:
        from totem.server.sessions import fork

        source = service.store.get_session(args.fork)
        if source is None:
            raise ConfigError(f"No session with id {args.fork} to fork.")
        return fork(service.store, source)
    return service.open(
        session_id=args.run_session or args.session,
        continue_last=args.run_continue or args.continue_last,
        model=model,
    )


def run_command(args: argparse.Namespace) -> int:
    from totem.cli.trust import settle_trust

    interactive = args.format == "text" and sys.stdin.isatty() and sys.stdout.isatty()
    try:
        settle_trust(Path.cwd().resolve(), trust=args.trust, interactive=interactive)
        return asyncio.run(_run(args))
    except ConfigError as exc:
        print(f"totem: {exc}", file=sys.stderr)
        return EXIT_USAGE
