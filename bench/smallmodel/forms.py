"""Answer forms a request can ask for ("reply with a line in the form: ANSWER: <value>"): each
finds the value in an answer written that way, or says the answer is not in that form.

A wording of a question task names one of these in its module's FORMS; the task is then
judged on the value the form gives (see catalog.Task.judge), so a right value in the wrong
form (a bare `8437` where `ANSWER: 8437` was asked) fails.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Protocol

FENCE = re.compile(r"^```[\w-]*\n(.*?)\n?```$", re.DOTALL)
WRAPPERS = ("**", "__", "`", '"', "'")


def _bare(text: str) -> str:
    """`text` without surrounding space, one layer of markdown emphasis, code ticks or quotes,
    and a closing full stop: how a value is often set off in an answer."""
    text = text.strip().removesuffix(".").strip()
    for wrapper in WRAPPERS:
        if len(text) > 2 * len(wrapper) and text.startswith(wrapper) and text.endswith(wrapper):
            text = text[len(wrapper) : -len(wrapper)].strip()
    return text.removesuffix(".").strip()


class Form(Protocol):
    """What an answer must look like, and the value it carries when it does."""

    @property
    def shape(self) -> str:
        """The form in words, for a failed check's reason."""
        ...

    @property
    def marker(self) -> str:
        """Text the request must contain when it asks for this form ("" when none is fixed)."""
        ...

    def value(self, answer: str) -> str | None:
        """The value in `answer`, or None when `answer` is not in this form."""
        ...

    def written(self, value: str) -> str:
        """An answer in this form giving `value` (for the reference solutions)."""
        ...

    def misformed(self, value: str) -> str:
        """An answer giving `value` in another form, which this form must refuse."""
        ...


@dataclass(frozen=True, slots=True)
class AnswerLine:
    """A line that starts with `prefix` (say "ANSWER:") and gives the value after it; other
    lines may come before or after it. Of several such lines, the last counts."""

    prefix: str = "ANSWER:"

    @property
    def shape(self) -> str:
        return f"a line '{self.prefix} <value>'"

    @property
    def marker(self) -> str:
        return self.prefix

    def value(self, answer: str) -> str | None:
        found = None
        for line in answer.splitlines():
            line = line.strip().lstrip("*").strip()  # "**ANSWER:** 8437" is that line too
            if line.startswith(self.prefix):
                rest = _bare(line[len(self.prefix) :].lstrip("*"))
                found = rest or found
        return found

    def written(self, value: str) -> str:
        return f"I looked it up.\n{self.prefix} {value}"

    def misformed(self, value: str) -> str:
        return value


@dataclass(frozen=True, slots=True)
class OnlyValue:
    """The whole answer is the value, on one line ("reply with only the number")."""

    @property
    def shape(self) -> str:
        return "the value alone"

    @property
    def marker(self) -> str:
        return ""

    def value(self, answer: str) -> str | None:
        text = _bare(answer)
        return text if text and "\n" not in text else None

    def written(self, value: str) -> str:
        return f"{value}\n"

    def misformed(self, value: str) -> str:
        return f"The answer is {value}, as the project's files say."


@dataclass(frozen=True, slots=True)
class JsonField:
    """The whole answer (or one fenced block that is all of it) is a JSON object with `key`."""

    key: str

    @property
    def shape(self) -> str:
        return f'a JSON object {{"{self.key}": ...}}'

    @property
    def marker(self) -> str:
        return f'"{self.key}"'

    def value(self, answer: str) -> str | None:
        text = answer.strip()
        if fenced := FENCE.match(text):
            text = fenced.group(1).strip()
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return None
        if not isinstance(data, dict) or self.key not in data:
            return None
        return str(data[self.key])

    def written(self, value: str) -> str:
        return json.dumps({self.key: int(value) if value.isdigit() else value})

    def misformed(self, value: str) -> str:
        return f"{self.key}: {value}"


def same_value(given: str, accepted: tuple[str, ...]) -> bool:
    """True when `given` is one of `accepted`, ignoring case, wrapping quotes or ticks, a
    closing full stop and a leading "./" of a path."""

    def plain(text: str) -> str:
        return _bare(text).removeprefix("./").lower()

    return plain(given) in {plain(a) for a in accepted}
