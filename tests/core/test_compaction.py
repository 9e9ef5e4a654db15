"""long sessions stay under the model's window; the stored history is never rewritten."""

from __future__ import annotations

from pathlib import Path

from tests.support.loop_agents import make_agent, run_once
from totem.events import Notice, TextDelta, ToolEnd
from totem.messages import ImageBlock, Message, SummaryPart, TextPart, ToolPart
from totem.providers.base import ModelRequest
from totem.run.compaction import Compactor, context_note, estimate
from totem.run.loop import SUMMARY_MAX_TOKENS
from totem.testing.scripted import FunctionProvider, Turn, call, reply

WINDOW = 8_000


def test_three_hundred_turns_stay_under_a_small_window(tmp_path: Path) -> None:
    sizes: list[int] = []
    summaries = 0

    def model(request: ModelRequest, index: int) -> Turn:
        nonlocal summaries
        sizes.append(estimate(request.system, request.messages, request.tools))
        if request.system.startswith("You write the working summary"):
            summaries += 1
            assert request.tools == []
            assert request.max_tokens == SUMMARY_MAX_TOKENS  # however much the model may say
            return reply(f"Goal: fill the log. State: {summaries} summaries so far.")
        done = sum(1 for m in request.messages for p in m.parts if isinstance(p, ToolPart))
        if index >= 300 + summaries:
            return reply("All 300 steps are done.")
        return call(("echo", {"text": f"line {index} " + "y" * 90 + "\n", "times": 30}),
                    text=f"step {index} ({done} results visible)")

    agent = make_agent(tmp_path, FunctionProvider(model), max_steps=400)
    agent.context_window = WINDOW
    agent.max_rounds = 500
    sid, events = run_once(agent, "fill the log")
    assert events[-1].type == "run_finished" and events[-1].reason == "finished"
    assert max(sizes) <= WINDOW, f"largest request {max(sizes)} tokens"
    assert summaries >= 2
    assert any(isinstance(e, Notice) and "Compacted" in e.text for e in events)
    stored = agent.store.messages(sid)
    streamed_outputs = [e.output for e in events if isinstance(e, ToolEnd)]
    stored_outputs = [p.output for m in stored for p in m.parts if isinstance(p, ToolPart)]
    assert len(stored_outputs) == 300 and stored_outputs == streamed_outputs
    assert all(len(o) > 2900 and "elided" not in o for o in stored_outputs)  # whole
    streamed_text = "".join(e.text for e in events if isinstance(e, TextDelta))
    stored_text = "".join(m.text() for m in stored if m.role == "assistant")
    assert stored_text == streamed_text
    kinds = [p.kind for m in stored for p in m.parts if isinstance(p, SummaryPart)]
    assert kinds.count("request") == summaries and kinds.count("summary") == summaries


def _message(i: int, role: str, *parts: object) -> Message:
    return Message(id=f"m{i:03}", session_id="s", role=role, parts=list(parts))  # type: ignore[arg-type]


def test_old_tool_results_shortened_first_and_images_replaced() -> None:
    history = [_message(0, "user", TextPart("go"))]
    for i in range(1, 9):
        images = [ImageBlock("image/png", "AAAA")] if i == 1 else []
        tool = ToolPart(call_id=f"c{i}", name="read", input={"path": f"f{i}"},
                        raw_input="{}", state="completed", output=f"content {i}\n" + "z" * 6000,
                        images=images)
        history.append(_message(i, "assistant", tool))
    compactor = Compactor(window=12_000, reserve=1_000)
    plan = compactor.plan(history, system="sys", specs=[])
    assert not plan.needs_summary and plan.shortened > 0
    assert plan.tokens <= 12_000 - 1_000
    first = plan.messages[1].parts[0]
    assert isinstance(first, ToolPart) and first.output.startswith("[read result elided")
    assert first.images == []
    last = plan.messages[-1].parts[0]
    assert isinstance(last, ToolPart) and len(last.output) > 6000
    original = history[1].parts[0]
    assert isinstance(original, ToolPart) and len(original.output) > 6000  # not rewritten
    again = compactor.plan(history, system="sys", specs=[])
    assert again.messages[1].parts[0] == first  # the shortened prefix stays stable


def test_tool_results_of_an_earlier_request_are_shortened_when_asked_however_small() -> None:
    # a small model's assist keeps only this request's work whole (whole_from)
    def read(i: int) -> Message:
        return _message(i, "assistant", ToolPart(
            call_id=f"c{i}", name="read", input={"path": "a.py"}, raw_input="{}",
            state="completed", output=f"a.py v{i}\n" + "z" * 400))

    history = [_message(0, "user", TextPart("first")), read(1), read(2),
               _message(3, "user", TextPart("second")), read(4)]
    for window in (None, 100_000):
        compactor = Compactor(window=window)
        assert compactor.plan(history, system="", specs=[]).shortened == 0
        compactor.whole_from = history[3].id
        plan = compactor.plan(history, system="", specs=[])
        outputs = [p.output for m in plan.messages for p in m.parts if isinstance(p, ToolPart)]
        assert [o.startswith("[read result elided") for o in outputs] == [True, True, False]
        assert plan.shortened == 2 and outputs[2] == history[4].parts[0].output


def test_unknown_window_means_no_compaction() -> None:
    big = _message(1, "assistant", ToolPart(call_id="c", name="read", output="x" * 100_000))
    plan = Compactor(window=None).plan([_message(0, "user", TextPart("hi")), big],
                                       system="", specs=[])
    assert not plan.needs_summary and plan.shortened == 0


def test_the_last_resort_counts_what_it_shortened_and_left_out() -> None:
    history = [_message(0, "user", TextPart("go"))]
    for i in range(1, 7):
        tool = ToolPart(call_id=f"c{i}", name="read", input={"path": f"f{i}"}, raw_input="{}",
                        state="completed", output="w" * 20_000)
        history.append(_message(i, "assistant", tool))
    history += [_message(i, "assistant", TextPart("t" * 4_000)) for i in range(7, 20)]
    compactor = Compactor(window=4_000, reserve=1_000)
    plan = compactor.last_resort(compactor.plan(history, system="sys", specs=[]),
                                 system="sys", specs=[])
    assert plan.shortened > 0 and plan.dropped > 0
    note = context_note(plan)
    assert note == f"{plan.shortened} older tool results shortened and {plan.dropped} older " \
        f"message{'s' * (plan.dropped != 1)} left out"
    assert "-1" not in note


def test_a_summary_never_stands_for_the_request_being_worked_on() -> None:
    from totem.providers.localserver.stepmode import latest_request

    def read(i: int) -> Message:
        return _message(i, "assistant", ToolPart(
            call_id=f"c{i}", name="read", input={"path": "a.py"}, raw_input="{}",
            state="completed", output="x" * 400))

    request = TextPart("Fix the shift method in linked_list.py; answer DONE: <method>.")
    summary = _message(4, "assistant", SummaryPart("summary", "Read a.py twice.", "m002"))
    history = [_message(0, "user", request), read(1), read(2), summary, read(3)]
    plan = Compactor(window=None).plan(history, system="", specs=[])
    head = plan.messages[0]
    assert head.parts[0] == TextPart(
        "Summary of the earlier part of this conversation:\n\nRead a.py twice.", synthetic=True)
    assert head.parts[-1] == request  # word for word, and known as the person's
    assert latest_request(plan.messages) == request.text
    assert [m.id for m in plan.messages[1:]] == ["m003"]
    # a later request, not summarized, is what the model works on: the old one is not repeated
    later = _message(5, "user", TextPart("Now add a test."))
    plan = Compactor(window=None).plan([*history, later], system="", specs=[])
    assert [p.text for p in plan.messages[0].parts if isinstance(p, TextPart)] == [
        "Summary of the earlier part of this conversation:\n\nRead a.py twice."]
    assert latest_request(plan.messages) == "Now add a test."


def test_a_text_no_change_could_be_read_from_is_not_counted_as_sent() -> None:
    # the 1.5B's acronym.py, looping until its token limit: the text is kept in the history
    # (the person saw it) but not sent again, so it must not make the run summarize
    loop = 'words = words.replace("-", " ")\n' * 250
    step = '{"tool": "write", "args": {"path": "acronym.py"}}'
    why = "Nothing was written: the reply was cut off before the end of acronym.py's block."
    unread = _message(1, "assistant", TextPart(loop), ToolPart(
        call_id="c", name="write", input={"path": "acronym.py"}, raw_input='{"path": "x"}',
        state="error", output=why, from_text=True, meta={"step": step, "unreadable": why}))
    read = _message(2, "assistant", TextPart(loop), ToolPart(
        call_id="d", name="write", input={"path": "acronym.py", "content": loop},
        raw_input='{"path": "acronym.py", "content": "..."}' + "x" * len(loop),
        state="completed", output="Wrote acronym.py.", from_text=True, meta={"step": step}))
    assert estimate("", [unread], []) < 100
    # a change read from the text is sent as that text, once, not again as the call's input
    assert len(loop) // 4 <= estimate("", [read], []) < len(loop) // 4 + 100


def test_earlier_turns_keep_what_was_typed_and_the_answer_that_closed_them() -> None:
    def tool(i: int, name: str = "read") -> Message:
        return _message(i, "assistant", ToolPart(
            call_id=f"c{i}", name=name, input={"path": "a.py"}, raw_input="{}",
            state="completed", output="z" * 300))

    history = [
        _message(0, "user", TextPart("make a.py"), TextPart("[totem's note]", synthetic=True)),
        tool(1),
        _message(2, "assistant", TextPart("a.py\n```\nx = 1\n```"), tool(2, "write").parts[0]),
        _message(3, "user", TextPart("After your change the tests fail", synthetic=True)),
        _message(4, "assistant", TextPart("I wrote a.py.")),
        _message(5, "user", TextPart("now b.py")),
        tool(6),  # this turn ended without an answer (cut off)
        _message(7, "user", TextPart("tests fail:\n" + "E" * 200)),
        tool(8),
    ]
    compactor = Compactor(window=100_000, whole_from="m007", earlier_asked_and_answered=True)
    plan = compactor.plan(history, system="", specs=[])
    kept = [(m.id, [p.sent for p in m.parts if isinstance(p, TextPart)]) for m in plan.messages]
    assert kept == [("m000", ["make a.py"]), ("m004", ["I wrote a.py."]), ("m005", ["now b.py"]),
                    ("m007", [history[7].parts[0].sent]), ("m008", [])]
    assert plan.dropped == 4 and "4 older messages left out" in context_note(plan)
    assert not plan.needs_summary
    assert history[0].parts[1] in history[0].parts  # the stored history is not rewritten
    compactor.earlier_asked_and_answered = False  # as before: the steps stay, shortened
    assert len(compactor.plan(history, system="", specs=[]).messages) == len(history)
