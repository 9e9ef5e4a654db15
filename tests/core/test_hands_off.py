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
