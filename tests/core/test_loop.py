"""The loop, driven by the scripted providers shipped in the package."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.loop_agents import EchoTool, make_agent, run_once
from totem.abort import AbortSignal
from totem.events import (
    Notice,
    ReasoningDelta,
    RunFinished,
    StepFinished,
    TextDelta,
    ToolEnd,
    ToolStart,
)
from totem.messages import NoticePart, ReasoningPart, TextPart, ToolPart
from totem.policy.permission import Rule
from totem.providers.base import (
    ModelRequest,
    RetryableError,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolArgsChunk,
    ToolCallBegin,
)
from totem.run.loop import run_events
from totem.testing.scripted import FunctionProvider, ScriptedProvider, Turn, call, reply


def finished(events: list[object]) -> RunFinished:
    last = events[-1]
    assert isinstance(last, RunFinished)
    return last


def test_plain_answer_streams_and_is_stored(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, ScriptedProvider([reply("Hello there, friend.", chunk=4)]))
    sid, events = run_once(agent, "hi")
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 5 and "".join(deltas) == "Hello there, friend."
    assert finished(events).reason == "finished"
    stored = agent.store.messages(sid)
    assert [m.role for m in stored] == ["user", "assistant"]
    assert stored[1].text() == "Hello there, friend."


def test_tool_call_runs_and_result_goes_back(tmp_path: Path) -> None:
    provider = ScriptedProvider([call(("echo", {"text": "ab", "times": 2})), reply("done")])
    agent = make_agent(tmp_path, provider)
    sid, events = run_once(agent, "echo please")
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert [(e.name, e.output, e.is_error) for e in ends] == [("echo", "abab", False)]
    assert finished(events).reason == "finished"
    second = provider.requests[1].messages
    tool = next(p for m in second for p in m.parts if isinstance(p, ToolPart))
    assert tool.state == "completed" and tool.output == "abab"
    assert [s.step for s in events if isinstance(s, StepFinished)] == [1, 2]


def test_malformed_calls_become_tool_errors_and_run_goes_on(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            call(("echo", '{"text": "a"')),  # bad JSON
            call(("nosuch", {"x": 1})),  # unknown tool
            call(("echo", {"text": 5, "times": "many"})),  # wrong types
            reply("recovered"),
        ]
    )
    agent = make_agent(tmp_path, provider)
    _, events = run_once(agent, "go")
    errors = [e.output for e in events if isinstance(e, ToolEnd)]
    assert "not valid JSON" in errors[0]
    assert "Unknown tool 'nosuch'" in errors[1] and "echo" in errors[1]
    assert "Invalid arguments for echo" in errors[2] and "times" in errors[2]
    assert finished(events).reason == "finished"


def test_three_denials_in_a_row_stop_the_run(tmp_path: Path) -> None:
    turns: list[Turn] = [call(("poke", {"target": f"t{i}"})) for i in range(5)]
    agent = make_agent(tmp_path, ScriptedProvider(turns), rules=[Rule("poke", "*", "deny")])
    sid, events = run_once(agent, "poke things")
    end = finished(events)
    assert end.reason == "rejected" and end.steps == 3
    notes = [p for m in agent.store.messages(sid) for p in m.parts if isinstance(p, NoticePart)]
    assert any("three actions" in n.text for n in notes)


def test_headless_question_is_a_denial_that_says_why(tmp_path: Path) -> None:
    provider = ScriptedProvider([call(("poke", {"target": "x"})), reply("ok")])
    agent = make_agent(tmp_path, provider, mode="headless")
    _, events = run_once(agent, "poke")
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.is_error and "nobody can answer" in end.output and "--yes" in end.output


def test_step_limit_ends_with_a_closing_call_without_tools(tmp_path: Path) -> None:
    def always_call(request: ModelRequest, index: int) -> Turn:
        if not request.tools:
            return reply("Here is where I got to.")
        return call(("echo", {"text": str(index)}))

    provider = FunctionProvider(always_call)
    agent = make_agent(tmp_path, provider, max_steps=4)
    sid, events = run_once(agent, "loop forever")
    end = finished(events)
    assert end.reason == "step_limit" and "step limit" in end.detail
    assert len(provider.requests) == 5 and provider.requests[-1].tools == []
    assert agent.store.messages(sid)[-1].text() == "Here is where I got to."


def test_repeated_identical_call_is_caught(tmp_path: Path) -> None:
    def same(request: ModelRequest, index: int) -> Turn:
        return reply("final") if not request.tools else call(("echo", {"text": "same"}))

    provider = FunctionProvider(same)
    agent = make_agent(tmp_path, provider)
    _, events = run_once(agent, "again")
    end = finished(events)
    assert end.reason == "repeat"
    assert len(provider.requests) == 4  # three identical calls, then the closing answer
    hinted = provider.requests[2].messages[-1].parts[0]
    assert isinstance(hinted, ToolPart) and "same call with the same result" in hinted.output


def test_length_stop_sends_continue_up_to_three_times_then_says_it_is_cut(
    tmp_path: Path,
) -> None:
    cut: list[Turn] = [[TextChunk("part "), StreamEnd("length")] for _ in range(5)]
    provider = ScriptedProvider(cut)
    agent = make_agent(tmp_path, provider)
    _, events = run_once(agent, "write a lot")
    assert len(provider.requests) == 4
    last_user = provider.requests[-1].messages[-1]
    assert isinstance(last_user.parts[0], TextPart) and last_user.parts[0].text == "Continue."
    end = finished(events)
    assert end.reason == "truncated" and "still cut" in end.detail
    assert any(isinstance(e, Notice) and "still cut" in e.text for e in events)


def test_tool_call_written_as_text_is_run(tmp_path: Path) -> None:
    text = '<tool_call>\n{"name": "echo", "arguments": {"text": "hi"}}\n</tool_call>'
    provider = ScriptedProvider([reply(text), reply("ok")])
    agent = make_agent(tmp_path, provider, model="qwen2.5-coder-0.5b-instruct")
    _, events = run_once(agent, "go")
    start = next(e for e in events if isinstance(e, ToolStart))
    assert start.from_text and start.input == {"text": "hi"}
    assert any(isinstance(e, Notice) and "as text" in e.text for e in events)
    assert finished(events).reason == "finished"


def test_inline_thinking_becomes_reasoning(tmp_path: Path) -> None:
    provider = ScriptedProvider([reply("<think>Let me see.</think>The answer is 4.", chunk=3)])
    agent = make_agent(tmp_path, provider, model="qwen3:4b")
    sid, events = run_once(agent, "2+2")
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Let me see."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "The answer is 4."
    parts = agent.store.messages(sid)[1].parts
    assert isinstance(parts[0], ReasoningPart) and isinstance(parts[1], TextPart)


def test_retryable_error_before_output_is_retried(tmp_path: Path) -> None:
    from totem.providers.base import RetryableError

    busy = RetryableError("HTTP 503", status=503, retry_after=0)
    provider = ScriptedProvider([busy, reply("ok")])
    agent = make_agent(tmp_path, provider)
    _, events = run_once(agent, "hi")
    assert any(isinstance(e, Notice) and "retrying" in e.text for e in events)
    assert finished(events).reason == "finished"


def test_auth_error_ends_the_run_with_the_message(tmp_path: Path) -> None:
    from totem.providers.base import AuthError

    agent = make_agent(tmp_path, ScriptedProvider([AuthError("invalid x-api-key", status=401)]))
    sid, events = run_once(agent, "hi")
    end = finished(events)
    assert end.reason == "error" and "invalid x-api-key" in end.detail
    assert agent.store.messages(sid)[0].text() == "hi"


def test_resume_sees_the_earlier_conversation(tmp_path: Path) -> None:
    provider = ScriptedProvider([reply("first answer"), reply("second answer")])
    agent = make_agent(tmp_path, provider)
    sid, _ = run_once(agent, "one")
    run_once(agent, "two", session_id=sid)
    texts = [m.text() for m in provider.requests[1].messages]
    assert texts == ["one", "first answer", "two"]


def test_abort_mid_stream_keeps_the_partial_answer(tmp_path: Path) -> None:
    provider = ScriptedProvider([reply("abcdefghijklmnopqrstuvwxyz", chunk=1)], delay=0.02)
    agent = make_agent(tmp_path, provider)
    sid = agent.store.create_session(project="p", model="m").id
    abort = AbortSignal()

    async def go() -> list[object]:
        seen: list[object] = []
        async for event in run_events(agent, sid, "spell", abort=abort):
            seen.append(event)
            if sum(isinstance(e, TextDelta) for e in seen) == 5:
                abort.abort()
        return seen

    events = asyncio.run(go())
    assert finished(events).reason == "aborted"
    stored = agent.store.messages(sid)[1]
    assert stored.text() == "abcde"
    assert any(isinstance(p, NoticePart) and "Aborted" in p.text for p in stored.parts)


def test_read_only_calls_of_a_step_run_together(tmp_path: Path) -> None:
    class SlowEcho(EchoTool):
        active = 0
        peak = 0

        async def run(self, args: EchoTool.Input, ctx: object) -> object:  # type: ignore[override]
            SlowEcho.active += 1
            SlowEcho.peak = max(SlowEcho.peak, SlowEcho.active)
            await asyncio.sleep(0.05)
            SlowEcho.active -= 1
            return await super().run(args, ctx)  # type: ignore[arg-type]

    calls = call(*[("echo", {"text": str(i)}) for i in range(4)])
    agent = make_agent(tmp_path, ScriptedProvider([calls, reply("ok")]), tools=[SlowEcho()])
    _, events = run_once(agent, "many")
    assert SlowEcho.peak == 4
    assert sorted(e.output for e in events if isinstance(e, ToolEnd)) == ["0", "1", "2", "3"]
    assert finished(events).reason == "finished"


def test_secrets_in_tool_output_are_redacted(tmp_path: Path) -> None:
    from totem.policy.redact import Redactor

    provider = ScriptedProvider([call(("echo", {"text": "key=sk-abcdef123456 ok"})), reply("k")])
    agent = make_agent(tmp_path, provider)
    agent.redact = Redactor.from_environment({"OPENAI_API_KEY": "sk-abcdef123456", "HOME": "/r"})
    sid, events = run_once(agent, "show env")
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.output == "key=[redacted] ok" and "sk-abcdef" not in end.title
    stored = [p for m in agent.store.messages(sid) for p in m.parts if isinstance(p, ToolPart)]
    assert "sk-abcdef" not in stored[0].output


def test_null_arguments_fall_back_to_defaults(tmp_path: Path) -> None:
    provider = ScriptedProvider([call(("echo", {"text": "x", "times": None})), reply("k")])
    _, events = run_once(make_agent(tmp_path, provider), "echo")
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.output == "x" and not end.is_error


def test_cost_per_step_adds_up_to_the_run(tmp_path: Path) -> None:
    from totem.events import StepFinished
    from totem.messages import Usage
    from totem.providers.base import StreamEnd, UsageReport
    from totem.providers.catalog.catalogue import Price

    def turn(text: str, usage: Usage) -> list[object]:
        return [TextChunk(text), UsageReport(usage), StreamEnd("stop")]

    first = call(("echo", {"text": "a"}))
    first[-2] = UsageReport(Usage(input=1_000_000, output=0, cache_read=500_000))
    second = turn("done", Usage(input=2_000, output=1_000))
    provider = ScriptedProvider([first, second])  # type: ignore[list-item]
    agent = make_agent(tmp_path, provider)
    agent.price = Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    _, events = run_once(agent, "go")
    steps = [e.cost for e in events if isinstance(e, StepFinished)]
    assert steps[0] == pytest.approx(1.5 + 0.15)  # 500k fresh at $3/M + 500k cached at $0.30/M
    assert steps[1] == pytest.approx(0.006 + 0.015)
    end = finished(events)
    assert end.cost is not None and abs(end.cost - sum(c for c in steps if c)) < 1e-12


def test_prompt_cache_expiry_is_tracked(tmp_path: Path) -> None:
    import time

    from totem.events import StepFinished
    from totem.messages import Usage
    from totem.providers.base import StreamEnd, UsageReport

    cached = [TextChunk("hi"), UsageReport(Usage(input=100, cache_read=80)), StreamEnd("stop")]
    agent = make_agent(tmp_path, ScriptedProvider([cached, reply("plain")]))
    agent.cache_ttl = 300.0
    sid, events = run_once(agent, "one")
    step = next(e for e in events if isinstance(e, StepFinished))
    assert step.cache_expires is not None and 290 < step.cache_expires - time.time() <= 300
    _, events = run_once(agent, "two", session_id=sid)
    assert next(e for e in events if isinstance(e, StepFinished)).cache_expires is None


class CutAfterACall:
    """A provider whose first answer starts a tool call and is cut (as a dropped connection
    surfaces from an adapter); the next one answers in words. It keeps every request."""

    name = "cut"

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        if len(self.requests) == 1:
            yield TextChunk("Let me echo. ")
            yield ToolCallBegin(0, "call_1", "echo")
            yield ToolArgsChunk(0, '{"text": "ne')
            raise RetryableError("network: peer closed connection")
        for event in reply("Answered after the cut."):
            yield event

    async def aclose(self) -> None:
        pass


def test_a_cut_answer_is_kept_apart_its_call_not_run_and_never_sent_back(tmp_path: Path) -> None:
    provider = CutAfterACall()
    agent = make_agent(tmp_path, provider)
    sid, events = run_once(agent, "echo something")
    assert finished(events).reason == "finished"
    assert not any(isinstance(e, ToolStart | ToolEnd) for e in events)
    notice = next(i for i, e in enumerate(events)
                  if isinstance(e, Notice) and "Connection lost mid-answer" in e.text)
    assert [e.text for e in events[:notice] if isinstance(e, TextDelta)] == ["Let me echo. "]
    after = "".join(e.text for e in events[notice:] if isinstance(e, TextDelta))
    assert after == "Answered after the cut."
    user, cut, answer = agent.store.messages(sid)
    assert cut.interrupted and cut.text() == "Let me echo. "
    tool = next(p for p in cut.parts if isinstance(p, ToolPart))
    assert tool.state == "error" and tool.output.startswith("Not run: the connection was lost")
    assert isinstance(cut.parts[-1], NoticePart) and "peer closed" in cut.parts[-1].text
    assert answer.text() == "Answered after the cut." and not answer.interrupted
    # asked again with what was said before the cut, and afterwards the cut is left out
    assert [m.role for m in provider.requests[1].messages] == ["user"]
    _, _ = run_once(agent, "and again?", session_id=sid)
    sent = provider.requests[2].messages
    assert [m.role for m in sent] == ["user", "assistant", "user"]
    assert sent[1].text() == "Answered after the cut."
