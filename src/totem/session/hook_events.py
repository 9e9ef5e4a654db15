"""The person's hooks at a run's edges, around the loop's own events:

    session_start   the first request of a session in this service (source startup/resume)
    user_prompt     before the request reaches the model: exit 2 (or a block) stops it, and
                    the run ends at once, nothing stored; context is added to what the
                    model receives
    notification    when the run asks the person something (a permission, a question)

The tool and stop hooks are the loop's (run/user_hooks.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from totem.events import Event, Notice, PermissionAsked, QuestionAsked, RunFinished, RunStarted
from totem.hooks import HookOutcome, Hooks

__all__ = ["with_notification_hooks", "with_prompt_hooks"]


def _shown(outcome: HookOutcome) -> list[Event]:
    return [Notice(text, "warning") for text in outcome.shown]


async def with_prompt_hooks(
    hooks: Hooks, *, session_id: str, resumed: bool, text: str, model_text: str | None,
    mode: str, label: str, start: Callable[[str | None], AsyncIterator[Event]],
) -> AsyncIterator[Event]:
    """`start(model_text)`'s events, after the session_start and user_prompt hooks; a
    blocked prompt is a run that ends at once (`rejected`, the hook's reason shown)."""
    first = await hooks.session_start(session_id, resumed=resumed, mode=mode)
    prompt = await hooks.user_prompt(session_id, text, mode=mode)
    said = [*_shown(first), *_shown(prompt)]
    if prompt.blocked:
        yield RunStarted(session_id, "", label)
        for event in said:
            yield event
        detail = f"A user_prompt hook blocked the request: {prompt.reason}"
        yield Notice(detail, "warning")
        yield RunFinished("rejected", detail)
        return
    context = "\n\n".join(c for c in (first.context, prompt.context) if c)
    given = f"{model_text or text}\n\n{context}" if context else model_text
    started = False
    async for event in start(given):
        yield event
        if not started:  # the notices after RunStarted
            started = True
            for notice in said:
                yield notice


async def with_notification_hooks(
    hooks: Hooks, events: AsyncIterator[Event], *, session_id: str, mode: str,
) -> AsyncIterator[Event]:
    """The run's events; a question to the person also runs the notification hooks (in
    the background: the question does not wait for them)."""
    running: list[asyncio.Task[HookOutcome]] = []
    async for event in events:
        if isinstance(event, PermissionAsked | QuestionAsked):
            kind = "permission_prompt" if isinstance(event, PermissionAsked) else "question"
            message = (f"totem needs your permission to {event.title}"
                       if isinstance(event, PermissionAsked) else event.question)
            task = asyncio.create_task(hooks.notification(
                session_id, message=message, kind=kind, mode=mode))
            running.append(task)
        if isinstance(event, RunFinished):  # what the hooks had to say, before the end
            done, running[:] = list(running), []
            for outcome in await asyncio.gather(*done, return_exceptions=True):
                if isinstance(outcome, HookOutcome):
                    for notice in _shown(outcome):
                        yield notice
        yield event
