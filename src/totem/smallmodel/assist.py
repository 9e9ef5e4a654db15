"""What a small local model's run gets beyond the loop, behind run/assist.py's protocol.

Before its first step (each help can be switched off: smallmodel/levers.py):
  1. the plan step (smallmodel/plan.py): the model says, in a constrained answer, whether
     the request is a question or a change and which of the project's files it concerns;
  2. reading ahead, as real calls of totem's own: a listing of the project, the files the
     request names (paths that exist), the files of the plan, every file when the project
     is small; where the names the request mentions that the project defines are used;
     for a change, the project's tests (their failure is where a fix starts), and for a
     question whose plan names a test file, their brief output;
  3. the misspellings codespell knows in the files read, as a note.
During the run: for a question, no step is offered a tool that changes a file; for a
change, the first step must be a call, and when the files it plans (tests aside) are short
and one is a stub (smallmodel/stubs.py), they are written whole (edit is not offered:
Aider's `whole` format). After a change of a Python module, names other files import from
it that it no longer defines are told; else, once every file the plan changes was
changed, the project's tests run then, before the model's reply. A few calls are refused
before they run: an edit the run already made word for word, a whole-file write that
drops most of an existing file or copies read's line numbers into it, and a change of an
existing test file the plan did not name (when the plan names others, or after the tests
failed), and a write of a file's own text: unless the tests ran ahead and passed, and
nothing changed since (then it is the model's "nothing to change", and no change is asked
for), that step is taken back and the next is sampled warmer. After a step that read,
listed or searched just what an earlier call gave, the next does not look: for a question
it is the answer, for a change a call that does not look (or the answer).
After an answer without calls: an answer copied from the instructions, given without
looking, or naming paths the project lacks is sent back once; a change the plan said and
the run did not make, twice at most; after a change the project's tests run (unless they
ran since the last change), and a failure goes back to the model (twice at most); with
the lever `resample` on (off by default: it did not pay), a step that wrote files whole,
after which they fail, is first taken back and sampled again, warmer, from the prompt
before it (three times at most: the tests choose among the model's own samples, and
nothing is written back, the next sample replaces the file whole); an
answer that claims a change no call made ends the run as `unverified`.

Nothing here reads the request for what it asks (the plan is the model's word), and
nothing here deletes, renames or overwrites: every call made here reads, lists or runs the
project's tests, asked like any other.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from totem.events import Notice
from totem.messages import Message, ToolPart
from totem.run.assist import GO_ON, AheadCall, AssistedRun, StepHold
from totem.smallmodel import answers
from totem.smallmodel.levers import DEFAULT_LEVERS, Levers
from totem.smallmodel.plan import Plan, offered, parse_plan, plan_prompt, plan_schema
from totem.smallmodel.project import (
    ProjectFile,
    defined_names,
    distinctive,
    mentioned,
    named_files,
    text_files,
)
from totem.smallmodel.stubs import is_stub
from totem.smallmodel.surface import text
from totem.smallmodel.test_command import is_test_file, project_test_command

__all__ = ["SmallModelAssist"]

CHANGING = frozenset({"edit", "write", "patch"})
LOOKING = frozenset({"read", "glob", "grep"})
# asked of each file the plan removes: is it still there once the request is done?
GONE_SCHEMA = {"type": "object", "properties": {"after": {"enum": ["still there", "gone"]}},
               "required": ["after"], "additionalProperties": False}
MAX_FILES_READ = 8
MAX_FILES_LISTED = 60
MAX_PART_LINES = 80
MAX_GREPS = 2
MAX_ACT_NUDGES = 2
MAX_TEST_RUNS = 2
MAX_RESAMPLES = 3  # samples of a whole-file change taken back after the tests failed
TEST_OUTPUT_LINES = 40
MIN_BUDGET = 2_000
MAX_BUDGET = 16_000
UNKNOWN_WINDOW_BUDGET = 8_000
CHARS_PER_TOKEN = 3
ANSWER_ROOM = 4_096
MIN_REQUEST_WORDS = 3
# the temperatures of the steps after one, two (or more) writes of a file's own text: the
# model's own is calm (0.2: sampling.py), and the same prompt gives it the same text again;
# calm again once a change is made
WARMER = (0.5, 0.8)
MIN_KEPT = 1 / 3  # a whole-file write must keep this share of an existing file's lines
MIN_LENGTH = 2 / 3  # and be at least this long: the 1.5B "added an import" by writing 2 of 6
MIN_LINES_GUARDED = 2  # of a one-line file, a write may keep nothing
# A change whose planned files (tests aside) are all this short, and one of them a stub
# (smallmodel/stubs.py), is made by writing the whole file, as Aider's `whole` format does
# (well-formed even on the 0.5B): edit is not offered. The 1.5B, given edit on a 2-line
# stub, renamed the function three times and wrote no body.
WHOLE_FILE_LINES = 120
# a write where a third of the lines begin with a padded number, as read shows them
# ("     1\t"), copies the read's line numbers into the file (the 1.5B wrote
# "     1.\ndef clamp(...)"); a plain "1. item" or a column of numbers is not one
LINE_NUMBER = re.compile(r"^\s+\d+(?:\t|[.:)]?\s*$)")


def budget_for(window: int | None) -> int:
    """Characters of file text read ahead for a model with a `window` of tokens."""
    if window is None:
        return UNKNOWN_WINDOW_BUDGET
    return max(MIN_BUDGET, min(MAX_BUDGET, (window - ANSWER_ROOM) * CHARS_PER_TOKEN))


def _read(file: ProjectFile, *, budget: int) -> AheadCall:
    """A read of `file`: whole, or its first lines when it is bigger than the budget."""
    if len(file.text) <= budget:
        return AheadCall("read", {"path": file.path})
    lines = used = 0
    for line in file.text.splitlines(keepends=True):
        used += len(line)
        if used > budget:
            break
        lines += 1
    return AheadCall("read", {"path": file.path, "limit": min(max(lines, 1), MAX_PART_LINES)})


def _bounded(command: str) -> str:
    """`command` with its output cut to its last lines (a small window), its status kept."""
    return f"set -o pipefail; {command} 2>&1 | tail -n {TEST_OUTPUT_LINES}"


class SmallModelAssist:
    """One per run of a small local model (see the module doc)."""

    def __init__(self, run: AssistedRun, *, look_ahead: bool = True,
                 levers: Levers = DEFAULT_LEVERS) -> None:
        self.run = run
        self.look_ahead = look_ahead
        self.levers = levers  # which helps are on (smallmodel/levers.py)
        self.plan: Plan | None = None
        self.own: set[str] = set()  # call ids of totem's own calls
        self.must_act = False
        self.said: set[str] = set()  # the nudges given once
        self.act_nudges = 0
        self.test_runs = 0
        self.tested_at = -1  # how many changes the run had made when the tests last ran
        self.same_texts = 0  # writes refused for giving a file's own text again
        self.resamples = 0  # changes taken back after the tests failed (see `_take_back`)
        self.resampling = False  # ... and the next step is one's new sample
        self.copies: list[tuple[str, str]] = []  # those of the step now: (path, text)
        self.tests_failed = False
        # the tests ran ahead and passed, and nothing was changed since: a write of a file's
        # own text is then the model's "nothing to change", not a copy to take back
        self.passing = False
        # the last lines of the tests' run after a change, when they passed, and its command
        self.passed_output: str | None = None
        self.passed_command = ""
        self.as_is = False  # ... and the model wrote a file as it is: no change to ask for
        self.test_command: str | None = None
        self.whole_files = False  # the change is made with whole-file writes (no edit)
        self.all_read = False  # every file the change plans was read whole, ahead
        self.originals: dict[str, str] = {}  # a changed file's text before this run changed it
        self.looked_again = False  # the last step read, listed or searched what it had seen
        # the files the plan removes (deleted, renamed or moved away) that the request names,
        # and those a write of which was refused once for it (see `_removed_by_plan`)
        self.removals: tuple[str, ...] = ()
        self.removal_refused: set[str] = set()
        self.removal_held = False  # the next step may not write or edit (see `hold`)

    # before the first step --------------------------------------------------------------

    async def before_first_step(self) -> None:
        run = self.run
        request = run.request_text()
        if run.nested or not self.look_ahead or not request.strip():
            return
        if run.first > 0:  # an earlier request's reads and test runs: stale, and the most
            run.compactor.whole_from = run.history[run.first].id  # prompt to read again
            run.compactor.earlier_asked_and_answered = self.levers.earlier_steps_out
        files, many = text_files(run.root)
        self.plan = await self._ask_plan(files, request) if self.levers.plan else None
        if self.plan is not None and self.plan.kind == "change" and self.levers.removals:
            named = {f.path for f in named_files(files, request)}
            self.removals = await self._confirmed_gone(
                [f for f in self.plan.removed if f in named], request)
        if self.plan is not None:
            run.emit(Notice(self._plan_notice(self.plan)))
        calls = self._calls_ahead(files, many, request)
        parts = await run.make_calls(calls) if calls else []
        self.own.update(p.call_id for p in parts)
        tests = _bounded(self.test_command) if self.test_command else None
        self.passing = any(p.name == "bash" and (p.input or {}).get("command") == tests
                           and p.state == "completed" for p in parts)
        self._tell_spelling(files, parts)
        self._tell_parts()
        if not calls:
            return
        self.must_act = self.plan is not None and self.plan.kind == "change" and self.levers.act
        self.whole_files = self.levers.whole_files and self._short_change(files)
        self.all_read = self._planned_read_whole(parts)

    async def _ask_plan(self, files: list[ProjectFile], request: str) -> Plan | None:
        paths = offered(files)
        removed = self.levers.removals
        system, message = plan_prompt(paths, request, removed=removed)
        try:
            answer = await self.run.ask_schema(system, message, plan_schema(paths, removed=removed))
        except Exception as exc:  # a server that cannot answer it: the run goes on without
            from totem.providers.base import ProviderError

            if not isinstance(exc, ProviderError):
                raise
            return None
        return parse_plan(answer.strip(), self.run.root, paths)

    async def _confirmed_gone(self, paths: list[str], request: str) -> tuple[str, ...]:
        """Of the files the plan removes, those the model says again, asked about each
        alone, are gone once the request is done (deleted, renamed or moved away). In the
        plan the 1.5B named main.py removed for "remove the unused import from main.py" in
        2 to 3 of 4 wordings, and then, its write refused, ran `rm main.py`."""
        from totem.providers.base import ProviderError

        gone: list[str] = []
        for path in paths:
            message = text("gone_request").replace("{request}", request).replace("{path}", path)
            try:
                said = await self.run.ask_schema(text("gone"), message, GONE_SCHEMA)
                answer = json.loads(said.strip())
            except (ProviderError, ValueError):
                continue  # not confirmed: the file is not held as removed
            if isinstance(answer, dict) and answer.get("after") == "gone":
                gone.append(path)
        return tuple(gone)

    def _short_change(self, files: Sequence[ProjectFile]) -> bool:
        """A change whose planned files, tests aside, exist and are all short, one of them a
        stub; the model then writes each whole (see WHOLE_FILE_LINES)."""
        plan = self.plan
        if plan is None or plan.kind != "change" or "write" not in self.run.tools:
            return False
        by_path = {f.path: f for f in files}
        code = [by_path[p] for p in plan.files if p in by_path and not is_test_file(p)]
        return bool(code) and all(
            len(f.text.splitlines()) <= WHOLE_FILE_LINES for f in code) and any(
            is_stub(f.path, f.text) for f in code)

    def _planned_read_whole(self, parts: Sequence[ToolPart]) -> bool:
        """Whether every existing file of the plan was read whole by the calls ahead."""
        plan = self.plan
        if plan is None:
            return False
        read = {str((p.input or {}).get("path")) for p in parts
                if p.name == "read" and p.state == "completed"
                and not (p.input or {}).get("limit") and not (p.input or {}).get("offset")}
        existing = [f for f in plan.files if (self.run.root / f).is_file()]
        return bool(existing) and all(f in read for f in existing)

    @staticmethod
    def _plan_notice(plan: Plan) -> str:
        files = ", ".join(plan.files + plan.new_files) or "no file named"
        return f"The model's plan: a {plan.kind} ({files})."

    def _calls_ahead(self, files: list[ProjectFile], many: bool,
                     request: str) -> list[AheadCall]:
        run = self.run
        if not files:
            return []
        small = not many and len(files) <= MAX_FILES_LISTED
        calls = [AheadCall("glob", {"pattern": "**/*"}) if small
                 else AheadCall("read", {"path": "."})]
        budget = budget_for(run.compactor.window)
        planned = set(self.plan.files) if self.plan else set()
        wanted = [f for f in named_files(files, request)]
        wanted += [f for f in files if f.path in planned and f not in wanted]
        if not many and sum(len(f.text) for f in files) <= budget:  # all of a small project
            wanted += sorted((f for f in files if f not in wanted),
                             key=lambda f: (f.path.count("/"), f.path))
        used = 0
        for file in wanted[:MAX_FILES_READ]:
            left = budget - used
            if used and len(file.text) > left and left < budget // 4:
                continue  # too little room left for a useful part of it
            calls.append(_read(file, budget=left))  # whole, or its first lines
            used += min(len(file.text), left)
        defined = defined_names(files)
        for name in [n for n in defined if distinctive(n) and mentioned(n, request)][:MAX_GREPS]:
            calls.append(AheadCall("grep", {"pattern": name}))
        calls += self._tests_ahead()
        return [c for c in calls if c.name in run.tools]

    def _tests_ahead(self) -> list[AheadCall]:
        """The project's tests, run ahead: for a change (their failure is where a fix
        starts), and for a question whose plan names a test file (what they say is the
        answer; briefly, the failed tests' names and the count)."""
        plan, run = self.plan, self.run
        if plan is None or "bash" not in run.tools or not self.levers.tests_ahead:
            return []
        if plan.kind == "change":
            command = project_test_command(run.root)
            self.test_command = command
        elif any(is_test_file(p) for p in plan.files):
            command = project_test_command(run.root, brief=True)
        else:
            return []
        return [AheadCall("bash", {"command": _bounded(command)})] if command else []

    def _tell_parts(self) -> None:
        """The things the plan says the request asks for, when there are several."""
        if self.plan is None or len(self.plan.parts) < 2 or not self.levers.parts:
            return
        listed = "\n".join(f"{i}. {part}" for i, part in enumerate(self.plan.parts, 1))
        self.run.synthetic_user(text("parts").replace("{count}", str(len(self.plan.parts)))
                                .replace("{parts}", listed))

    def _tell_spelling(self, files: list[ProjectFile], parts: Sequence[ToolPart]) -> None:
        from totem.smallmodel.spelling import spelling_note

        read = {str((p.input or {}).get("path")) for p in parts
                if p.name == "read" and p.state == "completed"}
        note = spelling_note({f.path: f.text for f in files if f.path in read})
        if note:
            self.run.synthetic_user(note)

    # each step ------------------------------------------------------------------------------

    def hold(self) -> StepHold:
        answer = not self.must_act
        self.must_act = False
        again, self.looked_again = self.looked_again, False
        plan = self.plan
        if plan is not None and plan.kind == "question":
            # a second same look: the answer is in what it has (see _looked_again)
            seen = again and answer
            covers = (plan.parts if seen and self.levers.parts and len(plan.parts) > 1
                      else ())
            return StepHold(answer=answer, answer_now="seen" if seen else "",
                            withheld=CHANGING, covers=covers)
        # a step that must make the change, with every planned file read whole above, is
        # the change itself: the 1.5B, offered read, read the stub it had just been shown
        # until the repeat guard ended the run; after a second same look, nor is looking
        # offered again
        looking = LOOKING if (not answer and self.all_read) or again else frozenset()
        if self.removal_held:  # refused a write of a file its plan removes: told so, the
            # 1.5B picked the same write again at once, and wrote the file over
            self.removal_held = False
            looking = looking | CHANGING
        withheld = frozenset({"edit"}) if self.whole_files else frozenset()
        warmth = max(self.same_texts, self.resamples if self.resampling else 0)
        warmer = (WARMER[min(warmth, len(WARMER)) - 1]
                  if warmth and self.levers.warmer else None)
        return StepHold(answer=answer, withheld=withheld, not_now=looking, temperature=warmer)

    def refusal(self, name: str, args: Mapping[str, Any]) -> str | None:
        path = args.get("path")
        if name not in CHANGING or not isinstance(path, str):
            return None
        self._keep_original(path)
        if is_test_file(path) and not self._may_change_test(path) \
                and (self.tests_failed or self._planned_change_elsewhere(path)):
            return (f"Refused: {path} is a test, and the tests are correct. Change the code "
                    "they test so that they pass, not the test.")
        removed = self._removed_by_plan(path)
        if removed:
            return removed
        if name == "edit":
            return self._made_already(args)
        if name == "write":
            content = args.get("content")
            return (self._same_text(path, content) or self._empties(path, content)
                    or self._line_numbers(path, content) or self._drops_most(path, content))
        return None

    def _removed_by_plan(self, path: str) -> str | None:
        """A change of a file the plan removes, refused once: a write does not remove it
        (the 1.5B, asked to delete a file, wrote it over with a made-up line, or empty until
        the repeat guard; asked to rename one, wrote the new file and left the old). Once
        only: a model that writes it again overrules its plan."""
        if path not in self.removals or path in self.removal_refused:
            return None
        self.removal_refused.add(path)
        self.removal_held = True
        return text("removed_write").replace("{path}", path)

    def _planned_change_elsewhere(self, path: str) -> bool:
        """A change plan that names files, this existing one not among them (the 1.5B,
        asked to write acronym.py, rewrote acronym_test.py seven times)."""
        plan = self.plan
        return (plan is not None and plan.kind == "change" and bool(plan.files)
                and (self.run.root / path).is_file())

    def _keep_original(self, path: str) -> None:
        if path not in self.originals:
            try:
                self.originals[path] = (self.run.root / path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError, ValueError):
                return

    def _may_change_test(self, path: str) -> bool:
        planned = self.plan is not None and path in self.plan.files + self.plan.new_files
        return planned or self.run.runner.read_first.made_here(path)

    def _made_already(self, args: Mapping[str, Any]) -> str | None:
        """An edit the run already made, word for word (the 0.5B set the database timeout
        in app.ini, then sent the same edit again, which changed the cache timeout too)."""
        keys = ("path", "old_string", "new_string")
        wanted = [args.get(k) for k in keys]
        for message in self.run.history[self.run.first:]:
            for part in message.parts:
                if (isinstance(part, ToolPart) and part.name == "edit"
                        and part.state == "completed" and part.input
                        and [part.input.get(k) for k in keys] == wanted):
                    return (f"Refused: this same edit of {args.get('path')} was already made "
                            "in this run, and the file has the new text now. If the request "
                            "is done, answer with what you changed; if not, make the next "
                            "change.")
        return None

    def _same_text(self, path: str, content: object) -> str | None:
        """A write of the text the file has already (the 1.5B wrote its stub's solution five
        times over, until the repeat guard ended the run before the tests could run)."""
        if not isinstance(content, str):
            return None
        try:
            now = (self.run.root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            return None
        if now.rstrip("\n") != content.rstrip("\n"):
            return None
        if self.passing:  # the tests pass as it is: no warmer step, no take-back, no
            self.as_is = True  # asking for the change
        else:
            self.same_texts += 1
            self.copies.append((path, content))
        return (f"Refused: {path} already has exactly this text; nothing was changed. If the "
                "request is done, answer with what you changed; if not, write what is still "
                "missing.")

    def _empties(self, path: str, content: object) -> str | None:
        """A write of no text over a file that has some: never done, it deletes nothing (the
        1.5B, asked to remove a file, wrote it empty four times)."""
        if not isinstance(content, str) or content.strip():
            return None
        before = self.originals.get(path)
        if not before or not before.strip():
            return None
        return (f"Refused: this would leave {path} empty, and nothing was written. Write the "
                "file's whole text; an empty file is not a way to remove one.")

    def _line_numbers(self, path: str, content: object) -> str | None:
        """A write where many lines begin with line numbers (read's) the file does not have."""
        if not isinstance(content, str):
            return None
        written = [line for line in content.splitlines() if line.strip()]
        before = [line for line in (self.originals.get(path) or "").splitlines()
                  if line.strip()]
        numbered = sum(1 for line in written if LINE_NUMBER.match(line))
        had = sum(1 for line in before if LINE_NUMBER.match(line))
        if len(written) < 2 or numbered * 3 < len(written) or had * 3 >= len(before) > 0:
            return None
        return (f"Refused: many lines of this text for {path} begin with a line number, as "
                "read shows them; the numbers are not part of the file, and nothing was "
                "changed. Write the file's own text only, with no numbers before the lines.")

    def _drops_most(self, path: str, content: object) -> str | None:
        """A whole-file write that keeps too little of an existing file (small models write
        only the new line, and the rest is lost). What is kept is measured against the file
        as it was before this run changed it: the person's lines, not the model's own (a file
        the run made may be written again)."""
        if not isinstance(content, str) or self.run.runner.read_first.made_here(path):
            return None
        before = self.originals.get(path)
        if before is None:
            return None
        old = [line.strip() for line in before.splitlines() if line.strip()]
        if len(old) < MIN_LINES_GUARDED:
            return None
        written = [line.strip() for line in content.splitlines() if line.strip()]
        new = set(written)
        kept = sum(1 for line in old if line in new)
        if kept >= len(old) * MIN_KEPT and len(written) >= len(old) * MIN_LENGTH:
            return None
        return (f"Refused: write gives the whole new text of {path}, and this one keeps "
                f"{kept} of its {len(old)} lines ({len(written)} lines in all); nothing was "
                "changed. Give the whole file with your change in it, every line that stays "
                "included, or change one part with edit.")

    async def after_calls(self, parts: Sequence[ToolPart]) -> None:
        """After a change of a Python module: the names other files of the project import
        from it that it no longer defines, told to the model (it goes on as it chooses);
        else, once every file the plan changes was changed, the tests run (`tests_soon`)."""
        changed = [str((p.input or {}).get("path")) for p in parts
                   if p.name in CHANGING and p.state == "completed"
                   and p.call_id not in self.own]
        copies, self.copies = self.copies, []
        self.looked_again = self.levers.seen_again and self._looked_again(parts)
        if changed:
            self.same_texts = 0
            self.passing = self.as_is = False
        elif copies and self.levers.retract_copies:
            self._retract_copy(parts, copies)
        if changed and not self._tell_lost_names(changed) and self.levers.tests_soon \
                and self.levers.tests_after and self._planned_all_changed():
            request = self.run.request_text()
            if not await self._tests_fail(request, step=parts) \
                    and self.passed_output is not None:
                # said, not only shown as the result of a call of totem's own: told nothing,
                # the 1.5B went on after "6 passed" to write the test file its plan named
                # (Exercism diffie-hellman), then answered with the instructions, at 300 s
                self.run.synthetic_user(
                    text("tests_pass").replace("{command}", self.passed_command)
                    .replace("{output}", self.passed_output).replace("{request}", request))

    def _looked_again(self, parts: Sequence[ToolPart]) -> bool:
        """Whether one of the model's calls of this step read, listed or searched just what
        an earlier call of this run had, with the same result. The next step then does not
        look (the 1.5B, asked what the project does, read README.md three times after it
        was read ahead, and the run ended by the repeat guard in 5 runs of 5)."""
        runner = self.run.runner
        return any(part.name in LOOKING and part.state == "completed"
                   and part.call_id not in self.own and runner.times_seen(part) > 1
                   for part in parts)

    def _retract_copy(self, parts: Sequence[ToolPart], copies: list[tuple[str, str]]) -> None:
        """A step whose every call was a write refused for giving the file's own text is
        taken back: the model is not shown its copy again (shown it, the 1.5B copied it
        again), and the next step, sampled warmer, starts from the prompt before it. The
        repeat guard still counts it: a third same copy ends the run."""
        def copied(part: ToolPart) -> bool:
            given = part.input or {}
            return part.state == "error" and (given.get("path"), given.get("content")) in copies
        if not parts or not all(copied(p) for p in parts):
            return
        ids = {p.call_id for p in parts}
        for message in reversed(self.run.history[self.run.first:]):
            if message.role == "assistant" and any(
                    isinstance(p, ToolPart) and p.call_id in ids for p in message.parts):
                if all(not isinstance(p, ToolPart) or p.call_id in ids
                       for p in message.parts):
                    paths = ", ".join(sorted({path for path, _ in copies}))
                    self.run.retract(message, f"The model wrote {paths} with the text it "
                                     "has already; that step is taken back and asked again.")
                return

    def _planned_all_changed(self) -> bool:
        """Whether the run changed every file of a change plan (tests aside) that exists."""
        plan = self.plan
        if plan is None or plan.kind != "change":
            return False
        code = [f for f in plan.files if not is_test_file(f)]
        done = set(self._changed_paths())
        return bool(code) and all(f in done for f in code)

    def _changed_paths(self) -> list[str]:
        """The files the model's completed changes of this run named, in order."""
        return [str((p.input or {}).get("path")) for m in self.run.history[self.run.first:]
                for p in m.parts if isinstance(p, ToolPart) and p.name in CHANGING
                and p.state == "completed" and p.call_id not in self.own]

    def _change_count(self) -> int:
        """How many of the model's calls in this run could change the project (a command too)."""
        tools = self.run.tools
        return sum(1 for m in self.run.history[self.run.first:] for p in m.parts
                   if isinstance(p, ToolPart) and p.call_id not in self.own
                   and p.state == "completed" and p.name in tools
                   and not tools[p.name].read_only)

    def _tell_lost_names(self, changed: list[str]) -> bool:
        """The names other files import from a changed module that it no longer defines,
        told; True when there were any."""
        changed = [path for path in dict.fromkeys(changed) if path.endswith(".py")]
        if not changed:
            return False
        from totem.smallmodel.imports_check import missing_imports

        files = text_files(self.run.root)[0]
        by_path = {f.path: f.text for f in files}
        lost = [(path, user, name) for path in changed if path in by_path
                for user, name in missing_imports(path, by_path[path], files)]
        if lost:
            lines = "\n".join(f"- {user} imports {name} from {path}, which {path} no longer "
                              "defines." for path, user, name in lost[:6])
            self.run.emit(Notice("The change removed names other files import; telling the "
                                 "model."))
            # the file to write again is named: told only "keep them", the 1.5B wrote the
            # test file that imports them instead (Exercism dnd-character), in a loop
            paths = ", ".join(dict.fromkeys(path for path, _, _ in lost))
            self.run.synthetic_user(text("lost_names").replace("{lines}", lines)
                                    .replace("{paths}", paths))
        return bool(lost)

    # after an answer ------------------------------------------------------------------------

    async def after_answer(self, message: Message) -> tuple[str, str] | None:
        run = self.run
        if run.nested:
            return None
        answer = message.text()
        request = run.request_text()
        mine = run.history[run.first:]
        said = self._review(answer, request, mine) if self.levers.answer_review else None
        if said is not None:
            notice, nudge = said
            run.emit(Notice(notice))
            run.synthetic_user(nudge)
            return GO_ON, ""
        # a file the model changed in place is not one it removes (its plan was wrong: the
        # 1.5B's plan said main.py was removed when an import was to be taken out of it)
        kept = set(self._changed_paths())
        pending = [f for f in self.removals if f not in kept and (run.root / f).exists()]
        if pending and "removal" not in self.said:
            self.said.add("removal")
            self.must_act = True
            paths = ", ".join(pending)
            run.emit(Notice(f"The model's plan removes {paths}, still there; asking it to."))
            run.synthetic_user(text("removal_pending").replace("{paths}", paths)
                               .replace("{it_is}", "it is" if len(pending) == 1 else "they are")
                               .replace("{request}", request))
            return GO_ON, ""
        changed = answers.ran_change(mine, run.tools, besides=frozenset(self.own))
        if self.plan is not None and self.plan.kind == "change" and not changed \
                and not self.as_is and self.levers.act and self.act_nudges < MAX_ACT_NUDGES:
            self.act_nudges += 1
            self.must_act = True
            run.emit(Notice("The model planned a change and made none; asking it to make it."))
            how = ("take the write step with the file's path, then give its text"
                   if run.sampling.constrained else
                   "write the file whole, with every line it keeps and your change in it"
                   if self.whole_files else
                   "edit a file you have read (old_string copied exactly from it, new_string "
                   "the new text), or write a file whole")
            run.synthetic_user(text("act").replace("{request}", request).replace("{how}", how))
            return GO_ON, ""
        if changed and self.levers.tests_after and await self._tests_fail(request):
            return GO_ON, ""
        if answers.claims_change(answer) and not answers.ran_change(
                run.history, run.tools, besides=frozenset(self.own)):
            detail = ("The answer says something was changed, but no change was made in this "
                      "session.")
            run.emit(Notice(detail, "warning"))
            return "unverified", detail
        return None

    def _review(self, answer: str, request: str,
                mine: list[Message]) -> tuple[str, str] | None:
        """What is wrong with the answer, first found first: (a notice, the nudge)."""
        run = self.run
        if not answer.strip():
            return None
        told = "\n".join([run.system, *(s.description for s in run.specs)])
        if "copied" not in self.said and answers.copied(answer, told):
            self.said.add("copied")
            return ("The answer repeats the instructions the model was given; asking it to "
                    "answer the request.", answers.copied_nudge(request))
        parts = [p for m in mine for p in m.parts if isinstance(p, ToolPart)]
        files = [f.path for f in text_files(run.root)[0]]
        # a greeting ("hi", "thanks") has nothing to look into: its length says so, in any
        # language, without reading what it asks
        if not parts and "look" not in self.said and len(request.split()) >= MIN_REQUEST_WORDS:
            self.said.add("look")
            return ("The answer was not checked against the project; asking the model to "
                    "look with tools first.", answers.look_nudge(files))
        seen = request + "".join(f"{p.input} {p.output}" for p in parts)
        missing = answers.missing_paths(answer, files, seen)
        if missing and "missing" not in self.said:
            self.said.add("missing")
            return ("The answer names a file the project does not have; asking the model to "
                    "check.", answers.missing_path_nudge(missing, files))
        return None

    async def _tests_fail(self, request: str, *, step: Sequence[ToolPart] = ()) -> bool:
        """After a change: the project's tests, run as a call of totem's own; when they fail
        after a `step` that wrote files whole, it is taken back and sampled again (three
        times at most, `_take_back`), else the model gets their output (twice at most). True
        after either."""
        run = self.run
        again = self._may_resample(step)
        if (self.test_runs >= MAX_TEST_RUNS and not again) or "bash" not in run.tools:
            return False
        changes = self._change_count()
        if changes == self.tested_at:
            return False  # nothing changed since they last ran: the model knows the result
        self.tested_at = changes
        command = self.test_command or project_test_command(run.root)
        if command is None:
            return False
        if not again:
            self.test_runs += 1
        self.passed_output = None
        [part] = await run.make_calls([AheadCall("bash", {"command": _bounded(command)})])
        self.own.add(part.call_id)
        output = part.output or ""
        if part.state == "completed" and "Exit code: 0" in output:
            lines = [line for line in output.splitlines()[:-1] if line.strip()]
            self.passed_output, self.passed_command = "\n".join(lines[-3:]), command
        self.resampling = False
        if part.state == "completed" or "No module named pytest" in output \
                or "Exit code:" not in output:
            return False
        self.tests_failed = True
        if again:
            self._take_back(step, part)
            return True
        written = [p for p in run.runner.read_first.made if is_test_file(str(p))]
        nudge = text("new_test" if written else "tests_fail")
        run.emit(Notice("The project's tests fail after the change; asking the model to fix "
                        + ("the test it wrote." if written else "the code.")))
        run.synthetic_user(nudge.replace("{command}", command).replace("{output}", output)
                           .replace("{request}", request))
        self.must_act = True
        return True

    def _may_resample(self, step: Sequence[ToolPart]) -> bool:
        """Whether `step` may be sampled again if the tests fail after it: each of its calls
        wrote a file whole (the next sample replaces all of it, so the file holds no trace
        of the one taken back), none of them a test."""
        return (self.levers.resample and self.resamples < MAX_RESAMPLES and bool(step)
                and all(p.name == "write" and p.state == "completed"
                        and p.call_id not in self.own
                        and not is_test_file(str((p.input or {}).get("path"))) for p in step))

    def _take_back(self, step: Sequence[ToolPart], tests: ToolPart) -> None:
        """The step and the tests' run of it are taken back (stored and shown, never sent
        again); the next step, sampled warmer from the prompt before them, must be a call.
        Nothing is written back: the files keep the sample until the model writes another."""
        self.resamples += 1
        self.resampling = True
        self.must_act = True
        ids = {p.call_id for p in step} | {tests.call_id}
        paths = ", ".join(sorted({str((p.input or {}).get("path")) for p in step}))
        note = (f"The project's tests fail with this change of {paths}; it is taken back and "
                f"sampled again ({self.resamples} of {MAX_RESAMPLES}).")
        for message in self.run.history[self.run.first:]:
            if message.role == "assistant" and any(
                    isinstance(p, ToolPart) and p.call_id in ids for p in message.parts):
                self.run.retract(message, note)
                note = "The tests' run of that change is taken back with it."
