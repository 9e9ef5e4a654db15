"""Constrained tool calls ("step mode"): the server can only answer one valid step.

Small models write malformed calls, call tools that do not exist, or loop inside one
answer. A server that constrains its output to a JSON schema (llama.cpp, vLLM, LM Studio
with `response_format`; Ollama with `format`) removes the whole class: the request carries
no native tools, and the schema lets the answer be only

    {"tool": NAME, "args": ARGS}    one call of an offered tool, ARGS valid for that tool
    {"tool": "write", "args": {"path": PATH}}   a change of a file: its text comes next
    {"tool": "answer", "args": {}}  the reply to the person: its text comes next
    {"plan": [STEP, ...]}           in plan mode, the answer: the steps of the plan

JSON only chooses the action. The text of a change and the reply are the model's own plain
text, asked for in a second, unconstrained request (`textsteps.py`): code is never escaped
inside a JSON string, and no schema key stands in for the form the person asked for.

`step_request(request, ...)` turns a request into that form (the tools described in the
system prompt, earlier calls written as the same steps, their results as text), and
`textsteps.text_steps` turns the answer back into the events every adapter emits (a
`ToolCallBegin` with its arguments, or text), so the loop does not know the difference.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from totem.messages import Message, Part, TextPart, ToolPart, new_id
from totem.providers.base import (
    ModelRequest,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
    ToolSpec,
)
from totem.providers.localserver.sampling import LLAMACPP_ANSWER_SAMPLERS

__all__ = [
    "ANSWER", "CHANGING", "actions", "args_schema", "loop_cut", "reply_text", "schema_option",
    "step_args", "step_events", "step_request", "step_schema",
]

Json = dict[str, Any]
ABORTED_OUTPUT = "[Aborted by user]"  # a call that did not finish, as every adapter says it
# What a grammar need not know: said in the prompt, or checked by the tool itself.
_DROPPED = frozenset({"description", "title", "default", "examples", "minimum", "maximum",
                      "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format",
                      "pattern"})


def args_schema(schema: Any) -> Any:
    """A tool's parameter schema, small: no descriptions or bounds, `X | None` as `X`
    (an optional argument is left out instead), no properties beyond those named."""
    if isinstance(schema, list):
        return [args_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if isinstance(options, list):
        real = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        if len(real) == 1 and isinstance(real[0], dict):
            rest = {k: v for k, v in schema.items() if k != "anyOf"}
            return args_schema({**rest, **real[0]})
    out = {k: args_schema(v) for k, v in schema.items() if k not in _DROPPED}
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: args_schema(v) for k, v in schema["properties"].items()}
        out["additionalProperties"] = False
    return out


_KNOBS = frozenset({"integer", "number", "boolean"})


def step_args(parameters: Json) -> Json:
    """The arguments a step may give a tool: `args_schema`, less the optional numbers and
    switches (offset, limit, timeout, replace_all ...), which small models fill with
    guesses; those keep the tool's defaults."""
    schema: Json = args_schema(parameters)
    required = set(schema.get("required") or [])
    props = schema.get("properties")
    if isinstance(props, dict):
        schema["properties"] = {
            name: prop for name, prop in props.items()
            if name in required or not (isinstance(prop, dict) and prop.get("type") in _KNOBS)
        }
    return schema


PLAN_STEP: Json = {
    "type": "object",
    "properties": {"plan": {"type": "array", "items": {"type": "string", "minLength": 1},
                            "minItems": 1}},
    "required": ["plan"], "additionalProperties": False,
}


PLAN_INSTRUCTION = (
    '\n\nThis is plan mode: instead of the answer step, end with {"plan": ["first step", '
    '"second step", ...]}, the steps of your plan in order. Nothing is changed until the '
    "person approves it.")


# the tools whose arguments carry a file's text: in a step the model gives only the path,
# and writes the text next, in the format its file takes (edit_formats.py)
CHANGING = ("write", "edit")
ANSWER = "answer"  # the step that chooses to reply; the reply's text comes next
_PATH_ONLY: Json = {"type": "object", "properties": {"path": {"type": "string"}},
                    "required": ["path"], "additionalProperties": False}
_NO_ARGS: Json = {"type": "object", "properties": {}, "additionalProperties": False}


def actions(specs: list[ToolSpec]) -> list[ToolSpec]:
    """The tools a step chooses among: one change action (write) stands for edit too, since
    the format of the text that follows is chosen by the file, not by the model."""
    names = {s.name for s in specs}
    return [s for s in specs if not (s.name == "edit" and "write" in names)]


def _action_args(spec: ToolSpec) -> Json:
    if spec.name in CHANGING:
        return {**_PATH_ONLY, "properties": dict(_PATH_ONLY["properties"])}
    return step_args(spec.parameters)


def step_schema(
    specs: list[ToolSpec], *, answer: bool = True, call: bool = True,
    paths: Mapping[str, list[str]] | None = None, plan: bool = False,
) -> Json:
    """The schema of one step: (when `call`) a call of one of `specs` or (when `answer`)
    the answer step. With `paths`, only the tools it names are offered, each with its
    `path` argument held to the paths listed for it (a tool with none listed is not
    offered)."""
    steps: list[Json] = []
    for spec in actions(specs) if call else []:
        args = _action_args(spec)
        if paths is not None:
            if not paths.get(spec.name) or "path" not in args.get("properties", {}):
                continue
            args["properties"]["path"] = {"enum": list(paths[spec.name])}
        steps.append({"type": "object",
                      "properties": {"tool": {"const": spec.name}, "args": args},
                      "required": ["tool", "args"], "additionalProperties": False})
    if (answer or not steps) and plan:  # a plan-mode answer is a list of steps
        steps.append(PLAN_STEP)
    elif answer or not steps:
        steps.append({"type": "object",
                      "properties": {"tool": {"const": ANSWER}, "args": _NO_ARGS},
                      "required": ["tool", "args"], "additionalProperties": False})
    return {"anyOf": steps}


@cache
def _instructions() -> str:
    return (Path(__file__).with_name("stepmode.txt")).read_text(encoding="utf-8").strip()


def _signature(schema: Json) -> str:
    """`path, offset?` from a tool's arguments: an optional one marked `?`, a choice listed."""
    required = set(schema.get("required") or [])
    names = []
    for name, prop in (schema.get("properties") or {}).items():
        mark = "" if name in required else "?"
        choices = prop.get("enum") if isinstance(prop, dict) else None
        kind = prop.get("type") if isinstance(prop, dict) else None
        if isinstance(choices, list):
            names.append(f"{name}{mark}: {'|'.join(str(c) for c in choices)}")
        elif kind in ("string", None):
            names.append(f"{name}{mark}")
        else:
            names.append(f"{name}{mark}: {kind}")
    return ", ".join(names)


def _tool_lines(specs: list[ToolSpec]) -> str:
    lines = []
    for spec in actions(specs):
        if spec.name in CHANGING:
            lines.append(f"- write(path): {_next_text('write')}")
        else:
            lines.append(f"- {spec.name}({_signature(step_args(spec.parameters))}): "
                         f"{spec.description.strip()}")
    return "\n".join([*lines, f"- {ANSWER}(): {_next_text('answer-tool')}"])


def _call_words(part: ToolPart) -> str:
    """A call as the model is reminded of it: a change by its path alone (its text is in
    the history as the model wrote it, never inside JSON)."""
    args = _written_args(part)
    if part.name in CHANGING:
        args = {"path": args.get("path")}
    return f"{part.name} {json.dumps(args, ensure_ascii=False)}"


def _as_steps(
    message: Message, request: str, *, answer_now: str = "", question: bool = False,
    covers: Sequence[str] = (),
) -> list[Message]:
    """An assistant message with its calls written as steps, then a user message with
    their results, the request again and what to do next (a small model reads a plain
    result best, and forgets a request that is far above). A change written as text comes
    back as it was made: the step that chose it, what the model was asked to write, and
    the text it wrote (the server's cache of the prompt still holds)."""
    tools = [p for p in message.parts if isinstance(p, ToolPart)]
    if message.role != "assistant" or not tools:
        return [message]
    parts: list[Part] = [p for p in message.parts if not isinstance(p, ToolPart)]
    before: list[Message] = []
    texted = next((p for p in tools if p.meta and "step" in p.meta and "asked" in p.meta),
                  None)
    if texted is not None and texted.meta is not None and texted.meta.get("unreadable"):
        # a text that could not be read (cut at the limit, looping, with no fence) is not
        # shown again: a small model copies what it sees, its own loop too, and the loop
        # was the longest part of the prompt. The step stands alone, with why it failed.
        parts = [p for p in parts if not isinstance(p, TextPart)]
        parts.insert(0, TextPart(texted.meta["step"]))
    elif texted is not None and texted.meta is not None:
        before = [
            Message(f"{message.id}_step", message.session_id, "assistant",
                    [TextPart(texted.meta["step"])]),
            Message(f"{message.id}_asked", message.session_id, "user",
                    [TextPart(texted.meta["asked"], synthetic=True)]),
        ]
    for part in tools:
        if not part.from_text:  # a call written as text is in the message's text already
            step = {"tool": part.name, "args": _written_args(part)}
            parts.append(TextPart(json.dumps(step, ensure_ascii=False)))
    calls = list(dict.fromkeys(_call_words(p) for p in tools))
    results = [
        f"Result of {_call_words(p)}:\n"
        f"{p.output if p.state in ('completed', 'error') else ABORTED_OUTPUT}"
        for p in tools
    ]
    # the real 0.5B model called the same tool again until told plainly to answer now
    next_step = _next_text(answer_now or ("question" if question else "next"))
    next_step = next_step.replace("{calls}", " and ".join(calls))
    next_step = next_step.replace("{request}", request or "(see above)")
    if answer_now and covers:
        listed = "\n".join(f"{i}. {part}" for i, part in enumerate(covers, 1))
        next_step += f"\n\nThe reply must cover each of these {len(covers)} things:\n{listed}"
    text = "\n\n".join([*results, next_step])
    # totem's words, not the person's: `latest_request` looks past them
    user = Message(f"{message.id}_results", message.session_id, "user",
                   [TextPart(text, synthetic=True)])
    return [*before, dataclasses.replace(message, parts=parts), user]


def _latest_typed(messages: list[Message]) -> int:
    """The index of the person's latest message (-1: none)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user" and any(isinstance(p, TextPart) and not p.synthetic
                                          for p in message.parts):
            return index
    return -1


def _latest_request(messages: list[Message]) -> str:
    """What the person last asked (a text they typed, not one totem wrote)."""
    for message in reversed(messages):
        if message.role != "user":
            continue
        typed = [p.sent for p in message.parts if isinstance(p, TextPart) and not p.synthetic]
        if typed:
            return " ".join(typed).strip()[:2000]
    return ""


@cache
def _next_text(kind: str) -> str:
    """What follows the results of a step's calls (stepmode-KIND.txt): what to do next
    ("next"); for a question, how to answer it ("question": told how to make a change too,
    the 0.5B answered with those words); and, when the step must be the answer, how to say
    a test run's result ("tests": told "the request is: ...", the 0.5B answered with those
    words, and asked for "a sentence" wrote "5"), a change that did what the request
    gives word for word ("done"), or a question after a look that gave what an earlier
    one had ("seen")."""
    return (Path(__file__).with_name(f"stepmode-{kind}.txt")).read_text(encoding="utf-8").strip()


def reply_text(request: str) -> str:
    """What the model is asked after it chose to answer: its reply, as plain text."""
    return _next_text("reply").replace("{request}", request or "(see above)")


def latest_request(messages: list[Message]) -> str:
    """What the person last asked (see `_latest_request`)."""
    return _latest_request(messages)


def _written_args(part: ToolPart) -> Json:
    """The arguments as the model wrote them (the tool's defaults are not its words)."""
    try:
        written = json.loads(part.raw_input)
    except ValueError:
        written = None
    return written if isinstance(written, dict) else (part.input or {})


def step_request(
    request: ModelRequest, *, engine: str | None, answer: bool = True, answer_now: str = "",
    paths: Mapping[str, list[str]] | None = None, plan: bool = False,
    not_now: frozenset[str] = frozenset(), covers: Sequence[str] = (),
) -> ModelRequest:
    """`request` in step form, its schema where `engine` takes one (see the module doc);
    with `answer` False the step must be a call (the model answered too soon); with
    `answer_now` ("tests", "done", "seen") it must be the answer, asked as that file says (the
    tools are still described: the prompt stays the same for the server's cache); `paths`
    as `step_schema` takes them; with `plan` the answer is a plan's steps; `not_now` tools
    are described but left out of this step's schema (the prompt stays the same); `covers`
    the things a step that must be the answer is told to cover. A step that must
    be the answer, on llama.cpp, carries the server's DRY sampler
    (`sampling.LLAMACPP_ANSWER_SAMPLERS`)."""
    if not request.tools:
        return request
    callable_now = [t for t in request.tools if t.name not in not_now] or request.tools
    schema = step_schema(callable_now, answer=answer, call=not answer_now, paths=paths,
                         plan=plan)
    # offered no tool that changes a file, the request asks a question (see run/loop.py)
    question = not any(t.name in (*CHANGING, "patch") for t in request.tools)
    asked = _latest_request(request.messages)
    # the steps of an earlier request are not told the latest one again (told it in full
    # after each step, the 1.5B's second try of an exercise sent 2,540 characters of test
    # output six times over: 7,764 prompt tokens, four minutes of a CPU)
    typed = _latest_typed(request.messages)
    tools = _instructions().replace("{tools}", _tool_lines(request.tools))
    if plan:
        tools += PLAN_INSTRUCTION
    option = schema_option(engine, schema)
    if answer_now and engine == "llamacpp":  # the answer, written once (see sampling.py)
        extra = request.options.get("extra_body")
        option["extra_body"] = {**(extra if isinstance(extra, Mapping) else {}),
                                **LLAMACPP_ANSWER_SAMPLERS}
    return dataclasses.replace(
        request,
        system=f"{request.system}\n\n{tools}" if request.system else tools,
        messages=[step for i, m in enumerate(request.messages)
                  for step in _as_steps(m, asked if i > typed else "", question=question,
                                        answer_now=answer_now
                                        if i == len(request.messages) - 1 else "",
                                        covers=covers)],
        tools=[],
        options={**request.options, **option},
    )


def schema_option(engine: str | None, schema: Json) -> Json:
    """The request option that holds an answer to `schema` on the server's engine."""
    if engine == "ollama":
        return {"format": schema}
    return {"response_format": {"type": "json_schema",
                                "json_schema": {"name": "step", "schema": schema}}}


def _step(text: str) -> Json | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


LOOP_TAIL = 80  # characters at the end of an answer looked for earlier in it
LOOP_COPIES = 3  # that many copies: the model is repeating itself
LOOP_EVERY = 200  # characters between two looks


def loop_cut(text: str) -> int | None:
    """Where to cut a text that has begun repeating itself (after its first copy of the
    repeated piece), or None. Small models at a low temperature loop on one sentence until
    the answer's token limit: minutes on a CPU."""
    if len(text) < LOOP_TAIL * LOOP_COPIES:
        return None
    tail = text[-LOOP_TAIL:]
    if text.count(tail) < LOOP_COPIES:
        return None
    return text.index(tail) + LOOP_TAIL


def _salvaged(text: str) -> str:
    """The answer in a step cut short: `{"answer": "...` without its end, as plain text."""
    found = re.match(r'\s*\{\s*"answer"\s*:\s*"', text)
    if found is None:
        return text
    body = text[found.end():]
    try:
        return str(json.loads(f'"{body.rstrip(chr(92))}"'))
    except ValueError:
        return body.replace("\\n", "\n").replace('\\"', '"')


async def step_events(events: AsyncIterator[StreamEvent]) -> AsyncIterator[StreamEvent]:
    """The events of a step answer: its text held, then read as a call or an answer.

    Text that is not a step (the server did not constrain it) passes as text, for the
    loop's reading of calls written as text. An answer that starts repeating itself is cut
    there and ended (the stream is closed, so the server stops generating).
    """
    text: list[str] = []
    size = looked = 0
    async for event in events:
        if isinstance(event, TextChunk):
            text.append(event.text)
            size += len(event.text)
            if size - looked >= LOOP_EVERY:
                looked = size
                whole = "".join(text)
                cut = loop_cut(whole)
                if cut is not None:
                    closing = getattr(events, "aclose", None)
                    if closing is not None:  # the server stops generating
                        await closing()
                    yield TextChunk(_salvaged(whole[:cut]).strip())
                    yield StreamEnd("stop", "repeated")
                    return
            continue
        if isinstance(event, StreamEnd):
            for item in _read_step("".join(text), event):
                yield item
            return
        yield event


def _read_step(text: str, end: StreamEnd) -> list[StreamEvent]:
    step = _step(text.strip())
    if step is not None and isinstance(step.get("tool"), str):
        args = step.get("args") if isinstance(step.get("args"), dict) else {}
        return [ToolCallBegin(0, new_id("call"), step["tool"]),
                ToolArgsChunk(0, json.dumps(args, ensure_ascii=False)),
                StreamEnd("tool_calls", end.raw)]
    if step is not None and isinstance(step.get("answer"), str):
        return [TextChunk(step["answer"]), end]
    if step is not None and isinstance(step.get("plan"), list):
        steps = [str(s).strip() for s in step["plan"] if str(s).strip()]
        return [TextChunk("\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))), end]
    return [TextChunk(text), end] if text else [end]
