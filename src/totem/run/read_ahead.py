"""Reading ahead for a small model: the project's files it most likely needs, read for it.

Small models do not look before they act: given tools, the 1.5B and 0.5B Qwen coders grep
for the literal words of a request ("spelling mistake", "listen on port"), find nothing, and
answer from nothing, or edit a file they never saw. Aider's answer is to put the files in
the conversation; ours is the same, as real tool calls: before the model's first step of a
request, totem lists the project and reads the files the request most likely concerns, as
if the model had called `glob` and `read` itself. The person sees those calls like any
other; the read-before-change rule counts them; the model starts from the text it needs.

Which files: those the request names; then, when the whole project fits the budget, all of
it; else the files that share the most (rare) words with the request, by name first. Then
a grep for the names the request mentions (`area_of`, LedgerReconciler, Redis): where each
is used, or, for a question, that it is nowhere.
"""

from __future__ import annotations

import os
import re  # compiled on first use (re caches them), not at start-up
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from totem.run.request_kind import asked_action, changes_nothing

__all__ = ["AheadCall", "absent_names", "budget_for", "calls_ahead", "named_files", "named_terms",
           "request_terms"]

MAX_FILES_SCANNED = 2_000  # a bigger project gets its listing and the files it names only
MAX_FILE_BYTES = 512_000  # a bigger file is not read ahead; the model reads what it needs
MAX_FILES_READ = 8
MAX_FILES_LISTED = 60
MAX_PART_LINES = 60
MIN_BUDGET = 2_000
MAX_BUDGET = 16_000
UNKNOWN_WINDOW_BUDGET = 8_000
CHARS_PER_TOKEN = 3  # code is dense; an estimate on the safe side
ANSWER_ROOM = 4_096  # tokens left for the prompt, the tools and the answers
_SKIP_DIRS = frozenset({
    ".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".idea", ".vscode", "dist", "build", "target",
    ".next", ".cache",
})
_STOP_WORDS = frozenset("""
a about above after again all also an and any are as at be because been before being but
by can could did do does doing done each else every few file files fix for from get gets
give gives had has have having here how i if in into is it its it's just let like make
me more most my need needs new no not now of off on once one only or other our out over
please project put really same say see set should show so some still such tell than that
the their them then there these they this those through to too under until up use used
using very was way we well were what when where which while who why will with without
would yes you your change changes add update code line lines name named number value
rename delete remove create write read run tell find list look answer sentence sentences
""".split())


@dataclass(frozen=True, slots=True)
class AheadCall:
    """One call made for the model: a tool's name and its arguments."""

    name: str
    args: dict[str, str | int]


def budget_for(window: int | None) -> int:
    """Characters of file text read ahead for a model with a `window` of tokens."""
    if window is None:
        return UNKNOWN_WINDOW_BUDGET
    return max(MIN_BUDGET, min(MAX_BUDGET, (window - ANSWER_ROOM) * CHARS_PER_TOKEN))


def request_terms(request: str) -> set[str]:
    """The words of a request worth searching for: names and rare words, lower case, with
    the parts of snake_case and camelCase names too."""
    terms: set[str] = set()
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", request):
        pieces = [word, *re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", word)]
        for piece in pieces:
            low = piece.lower()
            if len(low) >= 3 and low not in _STOP_WORDS:
                terms.add(low)
    return terms


@dataclass(slots=True)
class _File:
    path: str  # relative, with '/'
    text: str


def _text_files(root: Path) -> tuple[list[_File], bool]:
    """The project's text files (binary and big ones left out), and whether there were
    more than MAX_FILES_SCANNED."""
    found: list[_File] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.endswith(".egg-info"))
        base = os.path.relpath(folder, root)
        for name in sorted(names):
            if len(found) >= MAX_FILES_SCANNED:
                return found, True
            relative = name if base == "." else f"{base}/{name}"
            text = _small_text(Path(folder) / name)
            if text is not None:
                found.append(_File(relative.replace(os.sep, "/"), text))
    return found, False


def _small_text(path: Path) -> str | None:
    try:
        if path.is_symlink() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:4096]:
        return None
    return data.decode("utf-8", errors="replace")


def named_files(root: Path, request: str) -> list[str]:
    """The text files of the project at `root` that the request names."""
    return [f.path for f in _named(_text_files(root)[0], request)]


def _named(files: Sequence[_File], request: str) -> list[_File]:
    """The files the request names, by path or by file name (`config.yaml`, `.gitignore`)."""
    low = request.lower()
    named = []
    for file in files:
        name = file.path.rsplit("/", 1)[-1].lower()
        for candidate in (file.path.lower(), name):
            if re.search(rf"(?<![\w.-]){re.escape(candidate)}(?![\w-])", low):
                named.append(file)
                break
    return named


def _scores(files: Sequence[_File], terms: Iterable[str]) -> dict[str, float]:
    """How much each file concerns the terms: a term in its path counts three times, in its
    text once; a term found in many files counts less."""
    terms = list(terms)
    texts = {f.path: f.text.lower() for f in files}
    spread = {t: sum(1 for text in texts.values() if t in text) or 1 for t in terms}
    scores: dict[str, float] = {}
    for file in files:
        path, text = file.path.lower(), texts[file.path]
        score = sum(3.0 for t in terms if t in path)
        score += sum(1.0 / spread[t] for t in terms if t in text)
        scores[file.path] = score
    return scores


def _is_readme(path: str) -> bool:
    return "/" not in path and path.lower().startswith("readme")


def _chosen(files: list[_File], request: str, *, budget: int) -> list[_File]:
    named = _named(files, request)
    scores = _scores(files, request_terms(request))
    ranked = sorted(files, key=lambda f: (f not in named, -scores[f.path], not _is_readme(f.path),
                                          f.path.count("/"), f.path))
    if sum(len(f.text) for f in files) <= budget:
        return ranked[:MAX_FILES_READ] if len(files) > MAX_FILES_READ else ranked
    wanted = [f for f in ranked if f in named or scores[f.path] > 0]
    if not wanted:
        wanted = [f for f in ranked if _is_readme(f.path)][:1]
    chosen: list[_File] = []
    used = 0
    for file in wanted:
        if len(chosen) >= MAX_FILES_READ:
            break
        if used + len(file.text) <= budget or not chosen:  # the first one, in part if big
            chosen.append(file)
            used += len(file.text)
    return chosen


def _read(file: _File, *, budget: int) -> AheadCall:
    """A read of `file`: whole, or its first lines (at most MAX_PART_LINES: a small model
    lost in a long README answers about something else) when it is bigger than the budget."""
    if len(file.text) <= budget:
        return AheadCall("read", {"path": file.path})
    lines = 0
    used = 0
    for line in file.text.splitlines(keepends=True):
        used += len(line)
        if used > budget:
            break
        lines += 1
    return AheadCall("read", {"path": file.path, "limit": min(max(lines, 1), MAX_PART_LINES)})


def named_terms(request: str) -> list[str]:
    """The names a request mentions: `quoted`, snake_case, camelCase, with digits, or
    Capitalised inside a sentence (Redis, LedgerReconciler); file names left out."""
    names: list[str] = []
    for match in re.finditer(r"[`'\"]?([A-Za-z_][A-Za-z0-9_]*)(?![\w.]*\.\w)", request):
        word, start = match.group(1), match.start(1)
        before = request[:start].rstrip()
        quoted = match.group(0)[0] in "`'\""
        sentence_start = not before or before[-1] in ".!?:"
        shaped = ("_" in word.strip("_") or re.search(r"[a-z][A-Z]|[A-Za-z]\d", word)
                  or (word[0].isupper() and not sentence_start))
        if (quoted or shaped) and len(word) > 2 and word.lower() not in _STOP_WORDS:
            if word not in names:
                names.append(word)
    return names


def _either_case(word: str) -> str:
    """A grep pattern for `word` with its first letter in either case."""
    first = word[0]
    head = f"[{first.upper()}{first.lower()}]" if first.isalpha() else re.escape(first)
    return head + re.escape(word[1:])


def _named_folder(files: Sequence[_File], request: str) -> str | None:
    """The one folder of the project the request names ("in the src folder", "under api/")."""
    folders = {f.path.rsplit("/", 1)[0] for f in files if "/" in f.path}
    folders |= {p for folder in list(folders) for p in _parents(folder)}
    named = [
        folder for folder in folders
        if re.search(rf"(?<![\w/.-]){re.escape(folder)}(?:/|\s+(?:folder|directory|dir)\b)",
                     request, re.I)
    ]
    return named[0] if len(named) == 1 else None


def _parents(folder: str) -> list[str]:
    parts = folder.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def _searches(files: Sequence[_File], request: str, *, question: bool) -> list[AheadCall]:
    """Greps for the names the request mentions (at most two), in the folder it names: for
    a question, also a name found nowhere (its "No matches" is the answer); for a change,
    only names in the files."""
    folder = _named_folder(files, request)
    calls = []
    for word in named_terms(request)[:2]:
        found = any(word.lower() in f.text.lower() for f in files)
        if found or question:
            args: dict[str, str | int] = {"pattern": _either_case(word)}
            if folder is not None:
                args["path"] = folder
            calls.append(AheadCall("grep", args))
    return calls


def calls_ahead(
    root: Path, request: str, *, budget: int, question: bool = False
) -> list[AheadCall]:
    """The calls to make before a small model's first step for `request`: a listing of the
    project, reads of the files chosen, and greps for the names it mentions (see the module
    doc); `question`: the request asks about the project, it changes nothing. None for an
    empty folder."""
    files, many = _text_files(root)
    if not files:
        return []
    # every file of a small project; the top folder of a bigger one (a glob would show a
    # hundred files picked by age)
    small = not many and len(files) <= MAX_FILES_LISTED
    listing = AheadCall("glob", {"pattern": "**/*"}) if small else AheadCall("read", {"path": "."})
    tests = _test_runs(root, request)
    if tests and asked_action(request) == "run":
        return [listing, *tests]  # "run the tests and tell me ...": their output is the answer
    chosen = _named(files, request) if many else _chosen(files, request, budget=budget)
    reads = [_read(f, budget=budget) for f in chosen]
    if re.search(r"\b(?:list|files|folders?|director(?:y|ies)|tree|structure)\b", request, re.I):
        # asked about the files themselves: the listing last, where a small model looks most
        return [*reads, listing, *_searches(files, request, question=question)]
    return [listing, *reads, *_searches(files, request, question=question), *tests]


def _test_runs(root: Path, request: str) -> list[AheadCall]:
    """For a request about what the tests do ("run the tests and tell me how many fail",
    "the test in test_slug.py fails; fix the code"): the test file it names, else every
    test of the project, run, so the model starts from their output (shown only the code,
    the 1.5B changed the wrong thing, and asked to count failures it guessed)."""
    from totem.run.test_commands import (
        asks_test_run,
        file_test_command,
        project_test_command,
        test_named,
    )

    if not asks_test_run(request):
        return []
    brief = changes_nothing(request)
    test = test_named(request, root)
    command = (file_test_command(test, brief=brief) if test
               else project_test_command(root, brief=brief))
    return [AheadCall("bash", {"command": command})] if command else []


def absent_names(root: Path, request: str) -> list[str]:
    """The names a request mentions that no text file of the project contains (in any
    case); none when the project is too big to say."""
    names = named_terms(request)
    if not names:
        return []
    files, many = _text_files(root)
    if many:
        return []
    texts = [f"{f.path}\n{f.text}".lower() for f in files]
    return [n for n in names if not any(n.lower() in text for text in texts)]
