"""Which helps of a small model's run are on: each can be switched off, to measure it alone.

Issue 34's rule: measure each lever on its own, on both models, and remove one that does not
pay. A provider's options (or a model's entry) take `assist: {NAME: false, ...}`; every help
is on when not named but `removals` and `resample`, which are off unless named true.
`read_ahead: false` (served.py) switches all the help before the first step off at once;
these are finer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

__all__ = ["DEFAULT_LEVERS", "Levers", "levers_from"]


@dataclass(frozen=True, slots=True)
class Levers:
    # the plan step: question or change, the files, the parts (off: no plan, so neither
    # the tests ahead nor the parts nor the asking to act, which the plan decides)
    plan: bool = True
    tests_ahead: bool = True  # the project's tests run before the first step
    tests_after: bool = True  # after a change the tests run and a failure goes back
    # ... and as soon as every file the plan changes was changed, not after the model's
    # reply (the 1.5B's reply to a whole-file write was the file again: ~40 s of a CPU)
    tests_soon: bool = True
    parts: bool = True  # the separate things the request asks, told as a list
    answer_review: bool = True  # an answer copied, unlooked or naming missing files, sent back
    act: bool = True  # a change planned and not made: the model is asked to make it
    whole_files: bool = True  # a short stub is written whole (edit is not offered)
    # after a write refused for giving the file's own text again, the next steps are sampled
    # warmer: at 0.2 the 1.5B wrote the same list_ops.py three times, until the repeat guard
    warmer: bool = True
    # ... and the step that wrote it is taken back (stored, never sent again): shown its own
    # copy and the refusal, the 1.5B copied it again (rna-transcription, triangle: three
    # times in a row, until the repeat guard), so the step is sampled again from the prompt
    # before it (which the server has cached)
    retract_copies: bool = True
    # a step whose every call wrote a file whole, after which the project's tests fail, is
    # taken back (stored, never sent again) with the tests' run of it, and sampled again,
    # warmer, from the prompt before it (cached by the server), up to three times; then the
    # failure goes back as without it. The tests choose among the model's own samples: shown
    # its failure, the 1.5B wrote the same code again (Exercism acronym, both tries).
    # OFF unless switched on: measured on the 1.5B on Exercism's first 10 dev exercises at
    # 4902007, none of its 20 samples taken back passed, the samples took the time the tries
    # had (2/10 pass@2 with it; 3/10 at f8c1a59 without), so it does not pay as it is
    resample: bool = False
    # after a step that read, listed or searched just what it had seen, with the same
    # result, the next one does not look: for a question it is the answer, for a change a
    # call that is not a look (or the answer). The 1.5B read README.md again and again
    # after it was read ahead, until the repeat guard ended the run
    seen_again: bool = True
    # the files the plan removes (deleted, renamed or moved away), the request names, and
    # the model says again, asked about each alone, are gone once it is done: a write of
    # one is refused once (and the step after it may not write), and an answer while one
    # is still there is sent back once. The 1.5B wrote such a file over (made up, or
    # empty) instead of removing it, and wrote a renamed file without removing the old one
    # OFF unless switched on: the 1.5B also names a file removed when a line is to be taken
    # out of it ("remove the unused import from main.py"), says so again when asked about
    # that file alone, and then, sent back with the file still there, ran `rm main.py` (2 of
    # 4 wordings at 12460cc). A help that can steer a deletion the person never asked for
    # is not on by default, whatever it gains (deletions 7/8 with it, 0/3 without)
    removals: bool = False
    # a request after earlier ones: those turns keep only what the person typed and the
    # answer that closed each (their steps, files read and tests run are stale: the files
    # are read again ahead). A second Exercism try of the 1.5B carried the first try's
    # steps and failures and, in 4 of 10, spent ~100 s of its 300 s summarizing them
    earlier_steps_out: bool = True


DEFAULT_LEVERS = Levers()


def levers_from(value: object) -> Levers:
    """The levers an `assist` setting names (None: the defaults); ValueError says what is wrong."""
    if value is None:
        return DEFAULT_LEVERS
    names = [f.name for f in fields(Levers)]
    if not isinstance(value, Mapping):
        raise ValueError(f"`assist` must be a mapping of {', '.join(names)} to true or false, "
                         f"not {value!r}")
    unknown = [str(k) for k in value if k not in names]
    if unknown:
        raise ValueError(f"`assist` has no {', '.join(unknown)}; its switches are "
                         f"{', '.join(names)}")
    wrong = [str(k) for k, v in value.items() if not isinstance(v, bool)]
    if wrong:
        raise ValueError(f"`assist`: {', '.join(wrong)} must be true or false")
    return Levers(**{str(k): bool(v) for k, v in value.items()})
