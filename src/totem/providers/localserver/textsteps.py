"""A constrained step whose text is the model's own: JSON chooses the action, and the text of
a change or of the reply comes in a second request, unconstrained, as plain text.

    1. the step (stepmode.step_request): {"tool": ..., "args": ...}, held to the schema;
       a call of a tool that only looks or runs a command is that call;
    2. {"tool": "write", "args": {"path": P}}: the model is asked for P's text in the
       format P's length calls for (edit_formats.py: the whole file in a fence, or
       SEARCH/REPLACE blocks); the reply streams to the person as text and is read back
       into `write` or `edit` calls (or, when it cannot be, one call whose result is the
       plain reason);
    3. {"tool": "answer", "args": {}}: the model is asked for its reply, which streams as
       the answer, in whatever form the person asked for.

The second request is the first one with the step and the question added at its end, so a
server's prompt cache serves all of it but those few lines. The calls carry how they were
asked (`ToolCallBegin.meta`: "step", "asked"), and stepmode writes them back into the
history the same way. A reply that starts repeating itself is cut as it streams (answers:
`stepmode.loop_cut`; files: `repeats.degenerate`, looked at here before each piece of the
text passes on, so that the write ends as a call whose result says why nothing was written
and the loop is not shown to the model again).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import Protocol

from totem.messages import Message, TextPart, Usage, new_id
from totem.providers.base import (
    ModelRequest,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
    UsageReport,
)
from totem.providers.localserver.edit_formats import Unreadable, format_for
from totem.providers.localserver.sampling import LLAMACPP_ANSWER_SAMPLERS
from totem.providers.localserver.stepmode import (
    ANSWER,
    CHANGING,
    LOOP_COPIES,
    LOOP_TAIL,
    latest_request,
    loop_cut,
    reply_text,
    step_events,
)
from totem.repeats import degenerate

__all__ = ["text_steps"]

HELD = LOOP_TAIL * LOOP_COPIES  # characters of an answer held back, so a loop can be cut
_CONSTRAINTS = ("response_format", "format")


class Streams(Protocol):
    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...


async def text_steps(
    provider: Streams, stepped: ModelRequest, *, engine: str | None, answer_now: bool,
    file_lines: Callable[[str], int | None],
    refused: Callable[[str], str | None] = lambda path: None,
) -> AsyncIterator[StreamEvent]:
    """The events of one step in step form (`stepped`, from stepmode.step_request);
    `answer_now`: the step is the reply, asked for by the request's last message;
    `file_lines(path)`: the lines of a project file, None when there is none;
    `refused(path)`: why a change of `path` would be refused whatever its text, or None: the
    text is then not asked for (a small model rewriting a long test file, refused after,
    spent minutes of a CPU writing it)."""
    usage = Usage()
    if answer_now:
        async for event in _reply(provider, _free(stepped, engine, answer=True), usage):
            yield event
        return
    raw: list[str] = []
    first: list[StreamEvent] = []
    async for event in step_events(_tapped(provider.stream(stepped), raw)):
        if isinstance(event, UsageReport):
            usage.add(event.usage)
        else:
            first.append(event)
    begin = next((e for e in first if isinstance(e, ToolCallBegin)), None)
    chosen = begin.name if begin is not None else None
    if begin is None or chosen not in (*CHANGING, ANSWER):
        for event in first:
            yield event
        yield UsageReport(usage)
        return
    step = "".join(raw).strip()
    args = _args(first)
    if chosen == ANSWER:
        asked = reply_text(latest_request(stepped.messages))
        follow = _free(_then(stepped, step, asked), engine, answer=True)
        async for event in _reply(provider, follow, usage):
            yield event
        return
    path = args.get("path")
    if not isinstance(path, str) or not path.strip():
        for event in _calls([], "write", {}, {"step": step, "asked": "",
                                              "unreadable": "A write step needs a path."}):
            yield event
        yield UsageReport(usage)
        yield StreamEnd("tool_calls")
        return
    reason = refused(path)
    if reason:
        for event in _calls([], "write", {"path": path}, {"step": step, "asked": "",
                                                          "unreadable": reason}):
            yield event
        yield UsageReport(usage)
        yield StreamEnd("tool_calls")
        return
    lines = file_lines(path)
    edit_format = format_for(lines)
    asked = edit_format.ask(path, exists=lines is not None)
    follow = _free(_then(stepped, step, asked), engine, answer=False)
    reply: list[str] = []
    end = StreamEnd("stop")
    looped = False
    # a loop is looked for here, in the whole text at each piece, before the run's call
    # guard sees that piece (in a tail of the text, now and then): the guard would end the
    # answer with no call, and the loop would be shown to the model again
    tapped = _tapped(provider.stream(follow), reply)
    try:
        async for event in tapped:
            if isinstance(event, TextChunk):
                looped = degenerate("".join(reply))
                if looped:
                    break  # the server stops (aclose)
                yield event
                if ("`" in event.text or "~" in event.text) \
                        and edit_format.finished("".join(reply), path):
                    break  # all that will be taken is in: the server stops (aclose)
            elif isinstance(event, UsageReport):
                usage.add(event.usage)
            elif isinstance(event, StreamEnd):
                end = event
    finally:
        await tapped.aclose()
    read = edit_format.read_reply("".join(reply), path, complete=end.reason != "length")
    if looped:
        read = Unreadable(
            f"Nothing was written: the text of {path} began repeating the same lines again "
            "and again, and was stopped. Write it again without repeated lines: where many "
            "lines differ only in one value, loop over those values instead.")
    meta = {"step": step, "asked": asked}
    if isinstance(read, Unreadable):
        events = _calls([], "write", {"path": path}, {**meta, "unreadable": read.reason})
    else:
        events = _calls([(c.name, c.args) for c in read], "", {}, meta)
    for event in events:
        yield event
    yield UsageReport(usage)
    yield StreamEnd("tool_calls", end.raw)


def _calls(calls: list[tuple[str, Mapping[str, object]]], name: str,
           args: Mapping[str, object], meta: dict[str, str]) -> list[StreamEvent]:
    """The events of `calls` (or of one call `name(args)` when there are none), each read
    from the model's text and carrying `meta`."""
    made: list[StreamEvent] = []
    for index, (called, given) in enumerate(calls or [(name, args)]):
        made.append(ToolCallBegin(index, new_id("call"), called, from_text=True,
                                  meta=dict(meta)))
        made.append(ToolArgsChunk(index, json.dumps(dict(given), ensure_ascii=False)))
    return made


def _args(events: list[StreamEvent]) -> dict[str, object]:
    text = "".join(e.text for e in events if isinstance(e, ToolArgsChunk))
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


async def _tapped(events: AsyncIterator[StreamEvent], into: list[str]
                  ) -> AsyncGenerator[StreamEvent, None]:
    """`events`, their text also kept in `into` (the step as the model wrote it)."""
    try:
        async for event in events:
            if isinstance(event, TextChunk):
                into.append(event.text)
            yield event
    finally:
        closing = getattr(events, "aclose", None)
        if closing is not None:
            await closing()


def _then(stepped: ModelRequest, step: str, asked: str) -> ModelRequest:
    """`stepped` with the model's step and the next question after it."""
    session = stepped.messages[-1].session_id if stepped.messages else ""
    return dataclasses.replace(stepped, messages=[
        *stepped.messages,
        Message(new_id("msg"), session, "assistant", [TextPart(step)]),
        Message(new_id("msg"), session, "user", [TextPart(asked, synthetic=True)]),
    ])


def _free(request: ModelRequest, engine: str | None, *, answer: bool) -> ModelRequest:
    """`request` with its answer no longer held to a schema; a reply on llama.cpp gets the
    server's DRY sampler (see sampling.py), the text of a file does not (code repeats)."""
    options = {k: v for k, v in request.options.items() if k not in _CONSTRAINTS}
    extra = options.get("extra_body")
    kept = {k: v for k, v in (extra.items() if isinstance(extra, Mapping) else ())
            if k not in LLAMACPP_ANSWER_SAMPLERS}
    if answer and engine == "llamacpp":
        kept.update(LLAMACPP_ANSWER_SAMPLERS)
    if kept:
        options["extra_body"] = kept
    else:
        options.pop("extra_body", None)
    return dataclasses.replace(request, options=options)


async def _reply(provider: Streams, request: ModelRequest, usage: Usage
                 ) -> AsyncIterator[StreamEvent]:
    """The reply's text as it streams, the last HELD characters held back until the end so
    that a reply that has begun repeating itself is cut after its first copy (the stream
    is closed, so the server stops)."""
    events = provider.stream(request)
    text = ""
    sent = 0
    end = StreamEnd("stop")
    try:
        async for event in events:
            if isinstance(event, TextChunk):
                text += event.text
                cut = loop_cut(text)
                if cut is not None:
                    if cut > sent:
                        yield TextChunk(text[sent:cut].rstrip())
                    end = StreamEnd("stop", "repeated")
                    break
                if len(text) - HELD > sent:
                    yield TextChunk(text[sent:len(text) - HELD])
                    sent = len(text) - HELD
            elif isinstance(event, UsageReport):
                usage.add(event.usage)
            elif isinstance(event, StreamEnd):
                end = event
            else:
                yield event
        else:
            if len(text) > sent:
                yield TextChunk(text[sent:])
    finally:
        closing = getattr(events, "aclose", None)
        if closing is not None:
            await closing()
    yield UsageReport(usage)
    yield end
