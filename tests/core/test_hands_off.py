"""What a request says not to change is refused to a small model, with the reason."""

from __future__ import annotations

from pathlib import Path

from tests.support.loop_agents import make_agent, run_once
from totem.events import RunFinished, ToolEnd
from totem.run.hands_off import hands_off
from totem.testing.scripted import ScriptedProvider, call, reply
from totem.tools.edit import Edit
from totem.tools.read import Read

SMALL = "qwen2.5-coder-1.5b-instruct"


def test_the_forms_of_hands_off() -> None:
    tests = hands_off("The test in test_slug.py fails. Fix the code so that it passes, "
                      "without changing the test.")
    assert tests.covers("test_slug.py") and tests.covers("tests/unit/test_a.py")
    assert tests.covers("src/app.spec.ts") and not tests.covers("slug.py")
    assert hands_off("Fix it without modifying any of the test files").tests
    named = hands_off("Don't touch config.yaml; set the port in app.ini.")
    assert named.covers("config.yaml") and not named.covers("app.ini")
    assert not hands_off("Rename area_of to rectangle_area everywhere, tests included.")


def test_a_small_model_may_not_edit_the_test_it_was_told_to_leave(tmp_path: Path) -> None:
    provider = ScriptedProvider([
        # the real 1.5B model's first edit for this request: the test itself
        call(("read", {"path": "test_slug.py"})),
        call(("edit", {"path": "test_slug.py", "old_string": "'a-b'", "new_string": "'a b'"})),
        call(("read", {"path": "slug.py"})),
        call(("edit", {"path": "slug.py", "old_string": "return text",
                       "new_string": "return text.replace(' ', '-')"})),
        reply("Fixed slug.py."),
    ])
    agent = make_agent(tmp_path, provider, tools=[Read(), Edit()], model=SMALL)
    (agent.root / "test_slug.py").write_text("from slug import slug\n\n\ndef test_slug():\n"
                                             "    assert slug('a b') == 'a-b'\n")
    (agent.root / "slug.py").write_text("def slug(text):\n    return text\n")
    _, events = run_once(agent, "The test in test_slug.py fails. Fix the code so that it "
                                "passes, without changing the test.")
    refused = [e for e in events if isinstance(e, ToolEnd) and e.is_error]
    assert refused and refused[0].output.startswith(
        "Refused: the request says not to change test_slug.py.")
    assert "'a-b'" in (agent.root / "test_slug.py").read_text()
    assert "replace(' ', '-')" in (agent.root / "slug.py").read_text()
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "finished"


def test_a_request_for_tests_only_keeps_the_code_under_test_as_it_is() -> None:
    asked = hands_off("Write a pytest test file tests/test_stack.py for the Stack class in "
                      "stack.py. It should check that pop returns the most recently pushed item.")
    assert asked.covers("stack.py") and not asked.covers("tests/test_stack.py")
    assert not asked.covers("conftest.py")
    assert asked.refusal(["stack.py"]) == (
        "Refused: the request asks for tests only, so stack.py stays as it is. Write the tests "
        "in the test file the request names.")
    for more in ("Add a function clamp to mathx.py and write a test for it.",
                 "Fix the bug in slug.py and add a test.", "Run the tests."):
        assert not hands_off(more).covers("mathx.py"), more


def test_a_small_model_asked_for_a_test_may_not_change_the_code(tmp_path: Path) -> None:
    """The real 1.5B run: it renamed Stack.pop before writing the test."""
    from totem.tools.write import Write

    provider = ScriptedProvider([
        call(("read", {"path": "stack.py"})),
        call(("edit", {"path": "stack.py", "old_string": "pop(self)",
                       "new_string": "pop_last(self)"})),
        call(("write", {"path": "tests/test_stack.py",
                        "content": "from stack import Stack\n\n\ndef test_pop():\n"
                                   "    s = Stack()\n    s.push(1)\n    assert s.pop() == 1\n"})),
        reply("Wrote tests/test_stack.py."),
    ])
    agent = make_agent(tmp_path, provider, tools=[Read(), Edit(), Write()], model=SMALL)
    source = "class Stack:\n    def pop(self):\n        return 1\n"
    (agent.root / "stack.py").write_text(source)
    run_once(agent, "Write a pytest test file tests/test_stack.py for the Stack class in "
                    "stack.py.")
    assert (agent.root / "stack.py").read_text() == source
    assert (agent.root / "tests" / "test_stack.py").is_file()
