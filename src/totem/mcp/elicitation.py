"""An MCP server's elicitation (a form, or an address to open) as questions for the person.

A form becomes a first question (answer or decline) and then one question per field, with
the field's choices as options (enum values, yes/no) and its default offered first; an
empty answer takes the default (SEP-1034) or skips an optional field. Answers are turned
into the field's type and checked against its schema; a wrong answer is asked again. With
nobody to ask (a headless run) or a dismissed question, the answer is "cancel".
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types

from totem.events import Event
from totem.policy.questions import QuestionService

__all__ = ["ANSWER", "DECLINE", "OPENED", "elicit"]

ANSWER = "Answer"
DECLINE = "Decline"
OPENED = "I opened it"
SKIP = "(skip)"
DEFAULT_MARK = " (default)"
MAX_TRIES = 3
Value = str | int | float | bool | list[str] | None


async def elicit(
    server: str,
    params: types.ElicitRequestParams,
    questions: QuestionService | None,
    *,
    emit: Callable[[Event], None] | None = None,
) -> types.ElicitResult:
    """The person's answer to a server's elicitation, asked as questions; the questions go
    to `emit` (the run in progress), or to the question service's own sink."""
    if questions is None:
        return types.ElicitResult(action="cancel")
    ask = functools.partial(questions.ask, emit=emit)
    if isinstance(params, types.ElicitRequestURLParams):
        answer = await ask(
            f"The MCP server '{server}' asks you to open this address:\n  {params.url}\n"
            f"{params.message}",
            [OPENED, DECLINE],
            allow_free=False,
        )
        return _action(answer, accept=OPENED)
    schema = params.requested_schema
    properties: dict[str, Any] = dict(schema.get("properties") or {})
    required = set(schema.get("required") or [])
    fields = ", ".join(str(p.get("title") or n) for n, p in properties.items())
    gate = await ask(
        f"The MCP server '{server}' asks: {params.message}"
        + (f"\n(It wants: {fields}.)" if fields else ""),
        [ANSWER, DECLINE],
        allow_free=False,
    )
    if gate != ANSWER:
        return _action(gate, accept=ANSWER)
    content: dict[str, Value] = {}
    for name, prop in properties.items():
        value, answered = await _field(server, name, prop, name in required, ask)
        if not answered:
            return types.ElicitResult(action="cancel")
        if value is not _SKIPPED:
            content[name] = value
    return types.ElicitResult(action="accept", content=content)


def _action(answer: str | None, *, accept: str) -> types.ElicitResult:
    if answer == accept:
        return types.ElicitResult(action="accept")
    return types.ElicitResult(action="decline" if answer == DECLINE else "cancel")


class _Skipped:
    pass


_SKIPPED: Any = _Skipped()


async def _field(
    server: str, name: str, prop: dict[str, Any], required: bool,
    ask: Callable[..., Awaitable[str | None]],
) -> tuple[Value, bool]:
    """The field's value (or _SKIPPED) and whether the person answered at all."""
    choices = _choices(prop)
    has_default = "default" in prop
    default = prop.get("default")
    options = [label + (DEFAULT_MARK if value == default else "") for label, value in choices]
    if has_default and not choices:
        options.insert(0, _show(prop["default"]))
    if not required and not has_default:
        options.append(SKIP)
    kind = prop.get("type")
    free = not choices or kind == "array"
    question = _field_question(name, prop, required, multi=kind == "array" and bool(choices))
    problem = ""
    for _ in range(MAX_TRIES):
        answer = await ask(problem + question, options, allow_free=free)
        if answer is None:
            return None, False
        answer = answer.strip().removesuffix(DEFAULT_MARK)
        if answer == SKIP or (not answer and not required and not has_default):
            return _SKIPPED, True
        if not answer and has_default:
            return prop["default"], True
        try:
            return _convert(answer, prop, choices), True
        except ValueError as exc:
            problem = f"That answer does not fit ({exc}). "
    return None, False


def _field_question(name: str, prop: dict[str, Any], required: bool, *, multi: bool) -> str:
    title = str(prop.get("title") or name)
    text = title + (f": {prop['description']}" if prop.get("description") else "")
    notes = []
    if required:
        notes.append("required")
    if "default" in prop:
        notes.append(f"default {_show(prop['default'])}")
    if multi:
        notes.append("one or more, separated by commas")
    if prop.get("format"):
        notes.append(str(prop["format"]))
    for bound, word in (("minimum", "at least"), ("maximum", "at most")):
        if bound in prop:
            notes.append(f"{word} {prop[bound]}")
    return text + (f" ({'; '.join(notes)})" if notes else "")


def _choices(prop: dict[str, Any]) -> list[tuple[str, Any]]:
    """(label, value) pairs for an enum, a titled enum, a boolean, or a multi-select."""
    source = prop.get("items") if prop.get("type") == "array" else prop
    if not isinstance(source, dict):
        return []
    if prop.get("type") == "boolean":
        return [("yes", True), ("no", False)]
    for key in ("oneOf", "anyOf"):
        if isinstance(source.get(key), list):
            return [(str(o.get("title", o.get("const"))), o.get("const")) for o in source[key]]
    values = source.get("enum")
    if isinstance(values, list):
        names = prop.get("enumNames") or source.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(values) else values
        return [(str(label), value) for label, value in zip(labels, values, strict=True)]
    return []


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _pick(answer: str, choices: list[tuple[str, Any]]) -> Any:
    for label, value in choices:
        if answer in (label, str(value)) or answer.lower() == label.lower():
            return value
    raise ValueError(f"choose one of {', '.join(label for label, _ in choices)}")


def _convert(answer: str, prop: dict[str, Any], choices: list[tuple[str, Any]]) -> Value:
    kind = prop.get("type")
    if kind == "array":
        items = [a.strip() for a in answer.split(",") if a.strip()]
        values = [_pick(a, choices) if choices else a for a in items]
        _bounds(len(values), prop.get("minItems"), prop.get("maxItems"), "choices")
        return [str(v) for v in values]
    if kind == "boolean":
        lowered = answer.lower()
        if lowered in ("yes", "y", "true", "1"):
            return True
        if lowered in ("no", "n", "false", "0"):
            return False
        raise ValueError("answer yes or no")
    if choices:
        picked: Value = _pick(answer, choices)
        return picked
    if kind in ("integer", "number"):
        try:
            number: int | float = int(answer) if kind == "integer" else float(answer)
        except ValueError:
            raise ValueError(f"expected {'a whole' if kind == 'integer' else 'a'} number") from None
        _bounds(number, prop.get("minimum"), prop.get("maximum"), "")
        return number
    _bounds(len(answer), prop.get("minLength"), prop.get("maxLength"), "characters")
    return answer


def _bounds(value: float, low: Any, high: Any, unit: str) -> None:
    suffix = f" {unit}" if unit else ""
    if isinstance(low, int | float) and value < low:
        raise ValueError(f"at least {low}{suffix}")
    if isinstance(high, int | float) and value > high:
        raise ValueError(f"at most {high}{suffix}")
