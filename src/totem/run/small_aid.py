"""What a small model's run gets beyond the loop itself, in the order a run meets it.

Before its first step: the request put in the hands of its tools (what it says to leave
alone, the place an edit means), and the files it concerns read ahead (run/read_ahead.py).
After an answer without calls: the change written in the answer made with tools
(run/answer_code.py), the test the request names run again, and what the request names
exactly and is still undone made by totem: a deletion or rename with the request's own
command (run/request_state.py), a spelling mistake with codespell's correction. Every call
made here is a call of totem's own: shown, checked and asked like the model's.

The loop (run/loop.py) owns one `SmallModelAid` per run of a small model, and none for other
models: nothing here touches a hosted model's run.
"""

from __future__ import annotations

import re  # compiled on first use (re caches them), not at start-up
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from totem.events import Event, Notice
from totem.messages import Message, ToolPart

if TYPE_CHECKING:
    from totem.run.agent import Agent
    from totem.run.answer_check import AnswerCheck
    from totem.run.compaction import Compactor
    from totem.run.execute import ToolRunner
    from totem.run.read_ahead import AheadCall
    from totem.tools.base import Tool

__all__ = ["AidedRun", "SmallModelAid"]

MAX_TEST_RUNS = 2  # the request's test, run after a small model's change
TEST_OUTPUT_CHARS = 1_500  # of its output, shown to the model when it fails


class AidedRun(Protocol):
    """What the aid uses of the run it helps."""

    agent: Agent
    nested: bool
    tools: dict[str, Tool]
    runner: ToolRunner
    answers: AnswerCheck
    history: list[Message]
    first: int
    compactor: Compactor

    def emit(self, event: Event) -> None: ...

    def request_text(self) -> str: ...

    def synthetic_user(self, text: str) -> None: ...

    async def make_calls(self, calls: Sequence[AheadCall]) -> list[ToolPart]: ...


def _call_key(name: str, args: Mapping[str, object]) -> tuple[str, object]:
    """A read, glob or grep by what it looked at: its pattern, else its path."""
    return name, args.get("pattern") or args.get("path")


class SmallModelAid:
    def __init__(self, run: AidedRun) -> None:
        self.run = run
        self.test_runs = 0  # runs of the request's test after a change

    def keep_hands_off(self) -> None:
        """The tools hold the request: changes of the files it says to leave alone are
        refused, and an edit that fits several places is made where it names."""
        from totem.run.hands_off import hands_off

        runner = self.run.runner
        runner.request = self.run.request_text()
        runner.hands_off = hands_off(runner.request)

    async def read_ahead(self) -> None:
        """List the project and read the files the request most likely concerns, as calls of
        totem's own, before the model's first step (see run/read_ahead.py). A request to run
        the tests has them run here, and that run is the command it asked for."""
        from totem.run.answer_check import MIN_REQUEST_WORDS, asked_action

        run = self.run
        request = run.request_text()
        if run.nested or not run.agent.read_ahead or len(request.split()) < MIN_REQUEST_WORDS:
            return
        from totem.run.read_ahead import budget_for, calls_ahead

        action = asked_action(request)
        done = self._calls_done()
        calls = [
            c for c in calls_ahead(run.agent.root, request, question=action is None,
                                   budget=budget_for(run.compactor.window))
            if c.name in run.tools and _call_key(c.name, c.args) not in done
        ]
        if not calls:
            return
        parts = await run.make_calls(calls)
        # a command that ran to its end, passing or failing (not refused, not stopped)
        ran = [p.call_id for p in parts if p.name == "bash" and "\n\nExit code: " in p.output]
        looked = [p.call_id for p in parts if action != "run" or p.call_id not in ran]
        run.answers.looked_ahead.update(looked)  # looking changes nothing
        # shown the files, a small model asked for a change tends to say it read them
        run.answers.must_act = action == "change" or (action == "run" and not ran)
        # asked to run the tests and report, the 0.5B read README.md three times instead
        run.answers.must_answer = "tests" if action == "run" and ran else ""
        if action == "change":  # the first change goes where the request says
            from totem.run.request_state import change_targets

            run.answers.targets = change_targets(request, run.agent.root)

    def _calls_done(self) -> set[tuple[str, object]]:
        """The reads and listings the session already made, by tool and path or pattern."""
        done: set[tuple[str, object]] = set()
        for message in self.run.history:
            for part in message.parts:
                if isinstance(part, ToolPart) and part.state == "completed" and part.input:
                    done.add(_call_key(part.name, part.input))
        return done

    def _changed(self) -> bool:
        return self.run.answers.changed(self.run.history[self.run.first:])

    async def code_from_answer(self, message: Message) -> bool:
        """The model wrote the change in its answer (a fenced function, a new file's
        content) instead of calling a tool: made with edit or write (run/answer_code.py).
        True when there were such calls and every one of them succeeded."""
        from totem.run.answer_check import asks_change
        from totem.run.answer_code import calls_from_answer

        run = self.run
        request = run.request_text()
        if run.nested or not asks_change(request) or self._changed():
            return False
        calls = [c for c in calls_from_answer(message.text(), request=request,
                                              root=run.agent.root) if c.name in run.tools]
        if not calls:
            return False
        tools = " and ".join(dict.fromkeys(c.name for c in calls))
        run.emit(Notice("The model wrote the change in its answer instead of calling a tool; "
                        f"making it with {tools}."))
        parts = await run.make_calls(calls)
        return all(part.state == "completed" for part in parts)

    async def test_still_fails(self) -> bool:
        """After a change, the test file the request names is run (a call of totem's own);
        when it fails, the model is told its output and asked to fix the code, or, for a
        test it was asked to write, the test (the 1.5B copied Stack into its test and
        asserted that popping an empty stack gives 0). Up to MAX_TEST_RUNS times per run;
        True after such a nudge."""
        run = self.run
        if (run.nested or self.test_runs >= MAX_TEST_RUNS or "bash" not in run.tools
                or not self._changed()):
            return False
        from totem.prompt.small import test_nudge
        from totem.run.read_ahead import AheadCall
        from totem.run.test_commands import file_test_command, test_named

        request = run.request_text()
        test = test_named(request, run.agent.root)
        if test is None:
            return False
        hands_off = run.runner.hands_off
        writing = run.runner.read_first.made_here(test) or (
            hands_off is not None and hands_off.only_tests)
        self.test_runs += 1
        [part] = await run.make_calls([AheadCall("bash",
                                                 {"command": file_test_command(test)})])
        output = part.output or ""
        if part.state == "completed" or "No module named pytest" in output:
            return False
        fix = "the test" if writing else "the code"
        run.emit(Notice(f"{test} fails after the change; asking the model to fix {fix}."))
        run.synthetic_user(test_nudge(output[-TEST_OUTPUT_CHARS:], request, new=writing))
        run.answers.must_act = True
        return True

    async def finish_the_request(self) -> bool:
        """What the request names exactly and the model left undone, done with totem's own
        calls, asked like any other: a deletion or rename (the 0.5B edited the file three
        times instead; run/request_state.py), and, asked to fix a spelling mistake in a file
        it names, the misspellings codespell is certain of (the 0.5B edited another file).
        True when there were such calls and every one succeeded."""
        run = self.run
        if run.nested:
            return False
        from totem.run.read_ahead import AheadCall
        from totem.run.request_state import commands_left

        request = run.request_text()
        commands = [command for _, command in commands_left(request, run.agent.root)]
        calls = [AheadCall("bash", {"command": c}) for c in commands if "bash" in run.tools]
        said = ["running the request's own command: " + "; ".join(commands)] if calls else []
        spelling = self._spelling_left(request) if "edit" in run.tools else []
        if spelling:
            said.append("correcting the misspellings codespell finds in the file it names")
            calls.extend(spelling)
        lines = self._lines_left(request)
        if lines:
            said.append("writing the line it gives where it says")
            calls.extend(lines)
        imports = self._imports_left(request) if "edit" in run.tools else []
        if imports:
            said.append("importing the standard module its error names")
            calls.extend(imports)
        if not calls:
            return False
        run.emit(Notice("The model did not make the change the request names; "
                        + "; ".join(said) + "."))
        parts = await run.make_calls(calls)
        return all(part.state == "completed" for part in parts)

    def after_calls(self, parts: Sequence[ToolPart]) -> None:
        """After a change that did what the request gives word for word (the line is where
        it says), or left no misspelling in the file a spelling request names, the next
        step must say so: the 0.5B, having written NOTES.md right, went on to edit it twenty
        times ("the 14th", "the 15th" ...); the 1.5B, its typo fixed, appended the line
        again."""
        from totem.run.request_state import asked_lines

        run = self.run
        request = run.request_text()
        if run.nested or not any(p.state == "completed" and p.name in ("edit", "write")
                                 for p in parts):
            return
        if asked_lines(request, run.agent.root) and not self._lines_left(request) or \
                self._spelling_done(request):
            run.answers.must_answer = "done"

    def _spelling_done(self, request: str) -> bool:
        """A spelling request whose named files codespell finds nothing wrong with now."""
        from totem.run.read_ahead import named_files
        from totem.tools.spelling import asks_about_spelling, misspellings

        if not asks_about_spelling(request):
            return False
        named = named_files(self.run.agent.root, request)
        for path in named:
            try:
                text = (self.run.agent.root / path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return False
            if misspellings(text):
                return False
        return bool(named)

    def _lines_left(self, request: str) -> list[AheadCall]:
        """The line a request gives word for word ("add *.log as a new last line of
        .gitignore", "create NOTES.md containing exactly this line: ..."), where it is not:
        appended with edit, or the file written (new, or one this run made otherwise)."""
        from totem.run.read_ahead import AheadCall
        from totem.run.request_state import asked_lines

        run = self.run
        calls = []
        for kind, path, line in asked_lines(request, run.agent.root):
            try:
                text = (run.agent.root / path).read_text(encoding="utf-8")
            except FileNotFoundError:
                text = None
            except (OSError, UnicodeDecodeError):
                continue
            if kind == "append" and text is not None and "edit" in run.tools:
                last = [ln for ln in text.splitlines() if ln.strip()][-1:]
                if last != [line]:
                    calls.append(AheadCall("edit", {"path": path, "old_string": "",
                                                    "new_string": line}))
            elif kind == "create" and "write" in run.tools and (
                    text is None or text.strip() != line
                    and run.runner.read_first.made_here(path)):
                calls.append(AheadCall("write", {"path": path, "content": line + "\n"}))
        return calls

    def _imports_left(self, request: str) -> list[AheadCall]:
        """For a request that quotes a NameError of a standard module ("NameError: name
        'json' is not defined"): its import, in the Python files the request names that
        still use the module without it (the 0.5B was given that exact call in an error,
        three times, and sent its own again)."""
        import sys

        from totem.run.read_ahead import AheadCall, named_files
        from totem.tools.python_check import python_problems

        quoted = set(re.findall(r"name '(\w+)' is not defined", request))
        modules = {name for name in quoted if name in sys.stdlib_module_names}
        calls: list[AheadCall] = []
        for path in named_files(self.run.agent.root, request) if modules else []:
            if not path.endswith(".py"):
                continue
            try:
                source = (self.run.agent.root / path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for problem in python_problems(source, filename=path):
                name = re.search(r"name '(\w+)' is not defined", problem)
                if name and name.group(1) in modules and f"{name.group(1)}." in source:
                    calls.append(AheadCall("edit", {"path": path, "old_string": "",
                                                    "new_string": f"import {name.group(1)}"}))
        return calls

    def _spelling_left(self, request: str) -> list[AheadCall]:
        """Edits that correct the misspelled words of the files a spelling request names."""
        from totem.run.read_ahead import AheadCall, named_files
        from totem.tools.spelling import asks_about_spelling, spelling_fixes

        if not asks_about_spelling(request):
            return []
        calls: list[AheadCall] = []
        for path in named_files(self.run.agent.root, request):
            try:
                text = (self.run.agent.root / path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            calls.extend(AheadCall("edit", {"path": path, "old_string": old, "new_string": new})
                         for old, new in spelling_fixes(text))
        return calls
