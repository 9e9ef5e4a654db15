"""The JSON bodies the API accepts, as pydantic models: types are not coerced (a number is
not a text), every text has a length limit, and JSON nested deeper than pydantic's limit is
refused while it is parsed.

    body = parse(RunBody, raw)   # BadBody says what is wrong, for the page
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["AgentBody", "AnswerBody", "BadBody", "ForkBody", "IntegrationKeyBody",
           "NewSessionBody", "ProviderBody", "RenameBody", "ReplyBody", "RunBody", "UndoBody",
           "parse"]

Name = Annotated[str, Field(max_length=200)]
ModelLabel = Annotated[str, Field(max_length=300)]
Ident = Annotated[str, Field(max_length=100, pattern=r"^[A-Za-z0-9_\-]*$")]
Text = Annotated[str, Field(max_length=200_000)]


class _Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class NewSessionBody(_Body):
    model: ModelLabel | None = None


class RunBody(_Body):
    text: Text
    model: ModelLabel | None = None
    agent: Name | None = None
    mode: Literal["default", "plan", "accept_edits"] | None = None  # the session's mode
    # an approved plan's steps (as proposed or edited): the run carries them out
    plan: Annotated[list[Annotated[str, Field(max_length=4000)]], Field(max_length=200)] \
        | None = None


class ReplyBody(_Body):
    request_id: Ident
    reply: Literal["once", "always", "reject"]
    message: Annotated[str, Field(max_length=4000)] | None = None


class AnswerBody(_Body):
    request_id: Ident
    answer: Annotated[str, Field(max_length=20_000)] | None = None


class ForkBody(_Body):
    message_id: Ident | None = None


class UndoBody(_Body):
    redo: bool = False
    steps: Annotated[int, Field(ge=1, le=100)] = 1


class RenameBody(_Body):
    title: Annotated[str, Field(min_length=1, max_length=200)]


class PreviousAgent(_Body):
    name: Name
    scope: Literal["global", "project"]


class AgentBody(_Body):
    name: Name
    description: Annotated[str, Field(max_length=2000)]
    scope: Literal["global", "project"]
    tools: Annotated[list[Name], Field(max_length=100)] | None = None
    maxsteps: Annotated[int, Field(ge=1, le=10_000)] | None = None
    model: ModelLabel | None = None
    prompt: Annotated[str, Field(max_length=100_000)]
    previous: PreviousAgent | None = None


class ProviderBody(_Body):
    template: Name
    name: Name = ""
    url: Annotated[str, Field(max_length=2000)] = ""
    key: Annotated[str, Field(max_length=4000)] = ""
    key_env: Name = ""
    replace: bool = False


class IntegrationKeyBody(_Body):
    key: Annotated[str, Field(max_length=4000)] = ""
    base_url: Annotated[str, Field(max_length=2000)] = ""
    backend: Name = ""


class BadBody(Exception):
    """The body is not what the route takes; the message says why."""


B = TypeVar("B", bound=_Body)


def parse(model: type[B], raw: bytes) -> B:
    """`raw` (JSON; empty means {}) as `model`, or BadBody."""
    try:
        return model.model_validate_json(raw or b"{}")
    except ValidationError as exc:
        raise BadBody(_explain(exc)) from None


def _explain(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False, include_input=False)[:3]:
        where = ".".join(str(p) for p in error["loc"]) or "the body"
        problems.append(f"{where}: {error['msg']}")
    return "bad request body: " + "; ".join(problems)
