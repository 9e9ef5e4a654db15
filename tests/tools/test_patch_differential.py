"""Differential tests: `plan_patch` against the reference `apply_patch` (the Codex CLI binary).

Every case is a small directory tree plus a patch.  The reference binary applies the patch in
one copy of the tree; `plan_patch` plans it against another copy and the test writes the planned
changes there.  Both must succeed with byte-identical trees, or both must fail for the same kind
of reason (malformed patch, lines not found, missing file...).  When the reference fails half way
it leaves earlier changes on disk, while `plan_patch` changes nothing, so after a failure the
trees are not compared.

Known divergence, excluded from the cases: `*** Move to:` naming the file being updated.  The
reference writes the destination and then removes the source, which deletes the file it has just
written; `plan_patch` treats it as an update in place (see test_patch_format.py).  Nothing else
is excluded.
"""

from __future__ import annotations

import os
import random
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.refbin import apply_patch_binary, require_apply_patch_binary
from totem.tools.patch_format import FileChange, PatchError, plan_patch

Tree = dict[str, bytes]


@dataclass(frozen=True)
class Outcome:
    ok: bool
    tree: Tree
    detail: str


def _write_tree(root: Path, files: Tree) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _read_tree(root: Path) -> Tree:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _reference_env(root: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.pop("APPLY_PATCH_ASSUME_EOL", None)  # the binary's line-ending override
    env["GIT_CEILING_DIRECTORIES"] = str(root.parent)  # never consult an enclosing repository
    return env


def run_reference(binary: Path, files: Tree, patch: str) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="totem-ref-") as tmp:
        root = Path(tmp) / "tree"
        root.mkdir()
        _write_tree(root, files)
        result = subprocess.run(
            [str(binary), patch],
            cwd=root,
            env=_reference_env(root),
            capture_output=True,
            timeout=30,
        )
        detail = (result.stdout + result.stderr).decode(errors="replace")
        return Outcome(result.returncode == 0, _read_tree(root), detail)


def _write_changes(root: Path, changes: list[FileChange]) -> None:
    for change in changes:
        source = root / change.path
        if change.new is None:
            source.unlink()
            continue
        target = root / (change.move_to or change.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(change.new.encode())
        if change.move_to is not None:
            source.unlink()


def run_ours(files: Tree, patch: str) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="totem-ours-") as tmp:
        root = Path(tmp)
        _write_tree(root, files)

        def read_file(path: str) -> str | None:
            target = root / path
            return target.read_bytes().decode() if target.is_file() else None

        try:
            changes = plan_patch(patch, read_file)
        except PatchError as error:
            return Outcome(False, _read_tree(root), str(error))
        _write_changes(root, changes)
        return Outcome(True, _read_tree(root), "")


# Failure kinds: how the reference words each (its stderr), and how `PatchError` does.
FAILURE_KINDS = {
    "malformed patch": ("Invalid patch", "Invalid patch"),
    "context not found": ("Failed to find context", "Failed to find context"),
    "lines not found": ("Failed to find expected lines", "Failed to find expected lines"),
    "update of a missing file": ("Failed to read file to update", "Cannot update"),
    "delete of a missing file": ("Failed to delete file", "Cannot delete"),
    "no operations": ("No files were modified", "The patch contains no file operations"),
}


def failure_kind(detail: str, *, reference: bool) -> str:
    for kind, (theirs, mine) in FAILURE_KINDS.items():
        if (theirs in detail) if reference else detail.startswith(mine):
            return kind
    return f"unknown failure: {detail!r}"


def compare(binary: Path, files: Tree, patch: str) -> tuple[Outcome, Outcome, bool]:
    """Both succeed with the same tree, or both fail for the same kind of reason."""
    ref = run_reference(binary, files, patch)
    ours = run_ours(files, patch)
    if ref.ok or ours.ok:
        agree = ref.ok == ours.ok and ref.tree == ours.tree
    else:
        agree = failure_kind(ref.detail, reference=True) == failure_kind(
            ours.detail, reference=False
        )
    return ref, ours, agree


def describe(files: Tree, patch: str, ref: Outcome, ours: Outcome) -> str:
    return (
        f"files={files!r}\npatch={patch!r}\n"
        f"reference ok={ref.ok} tree={ref.tree!r}\n  {ref.detail!r}\n"
        f"ours      ok={ours.ok} tree={ours.tree!r}\n  {ours.detail!r}"
    )


@pytest.fixture(scope="module")
def binary() -> Path:
    return require_apply_patch_binary()


def test_missing_reference_skips_unless_required(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOTEM_REQUIRE_SERVERS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="npm ci"):
        require_apply_patch_binary(tmp_path)
    monkeypatch.setenv("TOTEM_REQUIRE_SERVERS", "1")
    with pytest.raises(pytest.fail.Exception, match="npm ci"):
        require_apply_patch_binary(tmp_path)


def test_reference_link_is_named_apply_patch(binary: Path) -> None:
    assert binary.name == "apply_patch"
    assert apply_patch_binary() == binary  # the cached link is reused


# --------------------------------------------------------------------------- hand-written cases


def P(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"])


def U(path: str, *lines: str) -> str:
    return P(f"*** Update File: {path}", *lines)


AB = {"f": b"a\nb\n"}
ABC = {"f": b"a\nb\nc\n"}

CASES: dict[str, tuple[Tree, str]] = {
    # the operations
    "add": ({}, P("*** Add File: new.txt", "+one", "+two")),
    "add nested": ({}, P("*** Add File: d/e/new.txt", "+x")),
    "add empty": ({}, P("*** Add File: empty")),
    "add overwrites": ({"f": b"old\n"}, P("*** Add File: f", "+new")),
    "delete": ({"f": b"x\n", "g": b"y\n"}, P("*** Delete File: f")),
    "delete missing": ({}, P("*** Delete File: f")),
    "update": (ABC, U("f", "@@", " a", "-b", "+B", " c")),
    "update missing": ({}, U("f", "@@", "-a", "+b")),
    "update without @@": (ABC, U("f", " a", "-b", "+B")),
    "several chunks": (
        {"f": b"1\n2\n3\n4\n5\n6\n7\n"},
        U("f", "@@", " 1", "-2", "+two", "@@", " 5", "-6", "+six"),
    ),
    "chunks out of order": ({"f": b"1\n2\n3\n"}, U("f", "@@", "-3", "+x", "@@", "-1", "+y")),
    "context header": (
        {"f": b"def a():\n  x\ndef b():\n  x\n"},
        U("f", "@@ def b():", "-  x", "+  y"),
    ),
    "context header missing": (AB, U("f", "@@ nope", "-a", "+A")),
    "stacked context headers": (
        {"f": b"class B:\n  def f():\n    return 1\n"},
        U("f", "@@ class B:", "@@   def f():", "-    return 1", "+    return 2"),
    ),
    "context header is not the chunk": (AB, U("f", "@@ a", "-a", "+A")),
    "context header trailing space": (
        {"f": b"foo \nx\nfoo\nx\n"},
        U("f", "@@ foo ", "-x", "+Y"),
    ),
    "context header keeps indentation": ({"f": b"  a\nz\na\nz\n"}, U("f", "@@   a", "-z", "+Z")),
    "bare @@ with padding": (AB, U("f", "@@  ", "-a", "+A")),
    "end of file": ({"f": b"a\nb\nc\nb\n"}, U("f", "@@", "-b", "+B", "*** End of File")),
    "end of file mismatch": (ABC, U("f", "@@", "-b", "+B", "*** End of File")),
    "end of file after previous chunk": (
        AB,
        U("f", "@@", "-a", "-b", "+X", "@@", "-b", "+Y", "*** End of File"),
    ),
    "end of file marker padded": (AB, U("f", "@@", "-b", "+B", "*** End of File \t")),
    "end of file marker indented": (AB, U("f", "@@", "-b", "+B", "  *** End of File")),
    "move": ({"f": b"a\n"}, P("*** Update File: f", "*** Move to: d/g", "@@", "-a", "+b")),
    "move overwrites": (
        {"f": b"a\n", "g": b"zzz\n"},
        P("*** Update File: f", "*** Move to: g", "@@", "-a", "+b"),
    ),
    "move trailing space": ({"f": b"a\n"}, P("*** Update File: f", "*** Move to: g  ", "@@", "-a")),
    "move indented is a context line": (
        {"f": b"a\n"},
        P("*** Update File: f", "  *** Move to: g", "@@", "-a", "+b"),
    ),
    "several files": (
        {"a.py": b"x = 1\n", "old.txt": b"bye\n"},
        P(
            "*** Add File: n/new.py",
            "+print(1)",
            "*** Update File: a.py",
            "@@",
            "-x = 1",
            "+x = 2",
            "*** Delete File: old.txt",
        ),
    ),
    "add then update": ({}, P("*** Add File: f", "+a", "*** Update File: f", "@@", "-a", "+b")),
    "delete then update": (AB, P("*** Delete File: f", "*** Update File: f", "@@", "-a")),
    "move then update target": (
        AB,
        P(
            *("*** Update File: f", "*** Move to: g", "@@", "-a", "+A"),
            *("*** Update File: g", "@@", "-b"),
        ),
    ),
    "update twice": (
        AB,
        P(*("*** Update File: f", "@@", "-a", "+A"), *("*** Update File: f", "@@", "-A")),
    ),
    "failure after success": ({}, P("*** Add File: f", "+x", "*** Delete File: nope")),
    # line endings and the final newline
    "crlf kept": ({"f": b"a\r\nb\r\nc\r\n"}, U("f", "@@", " a", "-b", "+B", "+X")),
    "mixed endings": ({"f": b"a\nb\r\nc\r\nd\r\n"}, U("f", "@@", " c", "+X")),
    "lone cr ends a line": ({"f": b"a\rb\nc\n"}, U("f", "@@", " a", "+X")),
    "cr then crlf": ({"f": b"a\r\r\nb\n"}, U("f", "@@", " a", " ", "+X")),
    "no final newline": ({"f": b"a\nb\nc"}, U("f", "@@", " a", "-b", "+B")),
    "no final newline at end": ({"f": b"a\nb"}, U("f", "@@", " a", " b", "+X")),
    "final cr kept": ({"f": b"a\nb\nc\r"}, U("f", "@@", "-b", "+B")),
    "replaced line takes preferred ending": ({"f": b"a\nb\r\n"}, U("f", "@@", "-b", "+b")),
    "delete everything": ({"f": b"a\n"}, U("f", "@@", "-a")),
    "empty file append": ({"f": b""}, U("f", "@@", "+X")),
    "blank file append": ({"f": b"\n\n"}, U("f", "@@", "+X")),
    "pure addition goes last": (AB, U("f", "@@ a", "+x")),
    "two pure additions": (AB, U("f", "@@", "+x", "@@", "+y")),
    "insertion after context then pure addition": (AB, U("f", "@@", " b", "+Y", "@@", "+X")),
    "pure addition then insertion after context": (AB, U("f", "@@", "+X", "@@", " b", "+Y")),
    "pure addition then insertion mid-file": (AB, U("f", "@@", "+X", "@@", " a", "+Y")),
    "pure addition then replacement": (AB, U("f", "@@", "+X", "@@", "-b", "+Y", "+Z")),
    "context between changes keeps its ending": (
        {"f": b"a\nb\r\nc\r\nd\n"},
        U("f", "@@", "-a", "+A", " b", "-c", "+C", " d"),
    ),
    "trailing empty context retried": (AB, U("f", "@@", " a", "-b", "+B", " ")),
    "trailing empty removal retried": (AB, U("f", "@@", "-b", "-", "+B", "+")),
    "trailing empty addition kept": (AB, U("f", "@@", "-b", "+B", "+")),
    "dropped context becomes new line": ({"f": b"a\r\nb\n"}, U("f", "@@", " b", " ", "+X")),
    "blank context at end of chunk": (
        {"f": b"a\n", "g": b"q\n"},
        P("*** Update File: f", "@@", "-a", "+b", "", "*** Delete File: g"),
    ),
    # lenient matching
    "trailing whitespace in file": ({"f": b"a  \nb\n"}, U("f", "@@", " a", "-b", "+B")),
    "surrounding whitespace in file": ({"f": b"x\n  a  \nb\n"}, U("f", "@@", " x", " a", "-b")),
    "punctuation normalised": (
        {"f": "a\u2014b \u201cq\u201d it\u2019s\nc\n".encode()},
        U("f", "@@", ' a-b "q" it\'s', "-c", "+C"),
    ),
    "exact match preferred over earlier fuzzy": ({"f": b"x \nx\n"}, U("f", "@@", "-x", "+y")),
    "nbsp normalised": ({"f": "a\u00a0b\n".encode()}, U("f", "@@", "-a b", "+c")),
    "ascii file separators are not whitespace": ({"f": b"a\x1f\n"}, U("f", "@@", "-a", "+c")),
    # envelope
    "heredoc": ({}, "<<'EOF'\n" + P("*** Add File: f", "+x") + "\nEOF\n"),
    "heredoc unquoted": ({}, "<<EOF\n" + P("*** Add File: f", "+x") + "\nEOF"),
    "heredoc double-quoted": ({}, '<<"EOF"\n' + P("*** Add File: f", "+x") + "\nEOF"),
    "heredoc with a bad body": ({}, "<<'EOF'\n*** Add File: f\n+x\n*** End Patch\nEOF"),
    "heredoc other delimiter": ({}, "<<'PATCH'\n" + P("*** Add File: f", "+x") + "\nPATCH"),
    "text after end": ({}, P("*** Add File: f", "+x") + "\ntrailing words"),
    "padded markers": ({}, "  *** Begin Patch  \n  *** Add File: f  \n+x\n   *** End Patch \n\n"),
    "crlf patch": (AB, U("f", "@@", "-a", "+b").replace("\n", "\r\n")),
    "empty patch": ({}, P()),
    "empty text": ({}, ""),
    "no begin": (AB, "*** Delete File: f\n*** End Patch"),
    "no end": (AB, "*** Begin Patch\n*** Delete File: f\n"),
    "bad header": (AB, P("*** Frob File: f")),
    "blank line between files": ({}, P("*** Add File: f", "+x", "", "*** Add File: g", "+y")),
    "add with unprefixed line": ({}, P("*** Add File: f", "+x", " y")),
    "empty update": (AB, U("f")),
    "only @@": (AB, U("f", "@@")),
    "second chunk without @@": (AB, U("f", "@@", "-a", "+A", "zzz")),
    "first chunk bad line": (AB, U("f", "zzz")),
    "blank lines before first chunk are context": (AB, U("f", "", "  ", "@@", "-a")),
    "blank line after end of file": (
        AB,
        U("f", "@@", "-b", "+B", "*** End of File", "", "@@", "+X"),
    ),
    "whitespace line after end of file": (
        AB,
        U("f", "@@", "-b", "+B", "*** End of File", "\t", "\u3000", " ", "", "@@", "+X"),
    ),
    "whitespace line after a chunk": (AB, U("f", "@@", "-a", "+A", "\t", "@@", "-b", "+B")),
    "whitespace line before the first chunk": (AB, U("f", "\t", "@@", "-b", "+B")),
    "indented header after end of file": (
        AB,
        U("f", "@@", "-b", "+B", "*** End of File", "  *** Delete File: f"),
    ),
    "delete with body": (AB, P("*** Delete File: f", "+x")),
    "path keeps leading space": ({}, P("*** Add File:  g", "+x")),
}


# Which characters the last matching pass treats as equal (file line, patch line).
NORMALISATION = [
    ("a\u2026b", "a...b"),
    ("\u00abq\u00bb", '"q"'),
    ("x\u2032", "x'"),
    ("a\u200bb", "ab"),
    ("a\u00adb", "a-b"),
    ("\ufeffa", "a"),
    ("a\u2010b", "a-b"),
    ("a\u2212b", "a-b"),
    ("a\u2015b", "a-b"),
    ("a\u201bb", "a'b"),
    ("a\u201fb", 'a"b'),
    ("a\u3000b", "a b"),
    ("a\u2000b", "a b"),
    ("a\u1680b", "a b"),
    ("\uff41", "a"),
    ("e\u0301", "\u00e9"),
    ("a\tb", "a b"),
    ("a  b", "a b"),
    ("\u00a0a", "a"),
    ("a\u2028", "a"),
    ("a\x85", "a"),
    ("a\x1c", "a"),
]
for _file_line, _patch_line in NORMALISATION:
    CASES[f"normalisation {_file_line!r} ~ {_patch_line!r}"] = (
        {"f": (_file_line + "\n").encode()},
        U("f", "@@", "-" + _patch_line, "+X"),
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_hand_written_case_agrees(binary: Path, name: str) -> None:
    files, patch = CASES[name]
    ref, ours, agree = compare(binary, files, patch)
    assert agree, describe(files, patch, ref, ours)


# --------------------------------------------------------------------------- random cases

POOL = ["a.txt", "b.py", "src/c.md", "src/deep/d.txt", "e.cfg", "new/f.txt", "g"]
VOCAB = [
    "",
    "",
    "def main():",
    "    return 0",
    "    pass",
    "import os",
    "x = 1",
    "x = 2",
    "# comment",
    "}",
    "  indented",
    "trailing  ",
    "\ttabbed",
    "print('hi - there')",
    "it\u2019s \u201cquoted\u201d \u2014 dash",
    "a\u00a0b",
    "wide\u3000",
    "sep\x1f",
    "vt\x0b",
    "@@ not a header",
    "*** not a marker",
    "+plus",
    "-minus",
    "end",
    "   ",
]
ENDING_STYLES = ["\n"] * 10 + ["\r\n"] * 3 + ["mixed"] * 2 + ["\r"]


class Gen:
    """Random trees and patches; `files` tracks the tree as the patch changes it (roughly)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.counter = 0

    def text(self) -> str:
        self.counter += 1
        if self.rng.random() < 0.45:
            return self.rng.choice(VOCAB)
        return f"line {self.counter}"

    def content(self) -> tuple[list[str], bytes]:
        rng = self.rng
        texts = [self.text() for _ in range(rng.choice([0, 1, 2, 3, 4, 6, 9, 14]))]
        style = rng.choice(ENDING_STYLES)
        endings = [
            rng.choice(["\n", "\r\n"]) if style == "mixed" else style for _ in range(len(texts))
        ]
        if texts and rng.random() < 0.15:
            endings[-1] = ""
        data = "".join(t + e for t, e in zip(texts, endings, strict=True)).encode()
        return texts, data

    def variant(self, text: str) -> str:
        """The line as a model might misremember it."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.3:
            return text + rng.choice([" ", "  ", "\t"])
        if roll < 0.5:
            return text.strip()
        if roll < 0.65:
            return "  " + text
        if roll < 0.8:
            return text.replace("-", "\u2013").replace("'", "\u2019").replace('"', "\u201d")
        return text.replace("\u2014", "-").replace("\u2019", "'").replace("\u00a0", " ")

    def chunks(self, texts: list[str]) -> list[str]:
        rng = self.rng
        n = len(texts)
        out: list[str] = []
        pos = 0
        for index in range(rng.choice([1, 1, 1, 2, 2, 3])):
            if pos > n or (index and pos == n):
                break
            start = rng.randint(pos, n)
            removed = rng.randint(0, min(3, n - start))
            added = [self.text() for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))]
            if not removed and not added:
                added = [self.text()]
            before = rng.randint(0, min(3, start - pos))
            after = rng.randint(0, min(3, n - start - removed))
            body = [(" ", t) for t in texts[start - before : start]]
            body += [("-", t) for t in texts[start : start + removed]]
            body += [("+", t) for t in added]
            body += [(" ", t) for t in texts[start + removed : start + removed + after]]
            end = start + removed + after
            for k, (mark, t) in enumerate(body):
                roll = rng.random()
                if mark != "+" and roll < 0.08:
                    body[k] = (mark, self.variant(t))
                elif mark != "+" and roll < 0.11:
                    body[k] = (mark, f"wrong {self.counter}")
            if rng.random() < 0.1:
                body.append((" ", ""))
            header = "@@"
            if start - before > pos and rng.random() < 0.4:
                line = texts[rng.randint(pos, start - before - 1)]
                header = "@@ " + (self.variant(line) if rng.random() < 0.2 else line)
            elif rng.random() < 0.05:
                header = f"@@ missing {self.counter}"
            if index == 0 and header == "@@" and rng.random() < 0.2:
                pass  # the first chunk may omit its @@ line
            else:
                out.append(header + rng.choice(["", "", " "]) if header == "@@" else header)
            for mark, t in body:
                out.append("" if mark == " " and t == "" and rng.random() < 0.5 else mark + t)
            if (end == n and rng.random() < 0.5) or rng.random() < 0.05:
                out.append("*** End of File")
            pos = end
        return out

    def case(self) -> tuple[Tree, str]:
        rng = self.rng
        names = rng.sample(POOL, rng.randint(1, 4))
        files: dict[str, list[str]] = {}
        tree: Tree = {}
        for name in names:
            files[name], tree[name] = self.content()
        lines: list[str] = []
        for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
            kind = rng.choice(["update"] * 6 + ["add"] * 2 + ["delete", "move"])
            existing = sorted(files)
            if kind in ("update", "move") and existing and rng.random() > 0.04:
                path = rng.choice(existing)
            elif kind in ("update", "move"):
                path = rng.choice(POOL)
            else:
                path = rng.choice(POOL)
            if kind == "add":
                texts = [self.text() for _ in range(rng.choice([0, 1, 2, 3, 5]))]
                lines.append(f"*** Add File: {path}")
                lines += ["+" + t for t in texts]
                files[path] = texts
            elif kind == "delete":
                if existing and rng.random() > 0.1:
                    path = rng.choice(existing)
                lines.append(f"*** Delete File: {path}")
                files.pop(path, None)
            else:
                lines.append(f"*** Update File: {path}")
                texts = files.get(path, [self.text()])
                if kind == "move":
                    # Excluded: a move onto the updated file itself (see the module docstring).
                    target = rng.choice([p for p in POOL if p != path])
                    lines.append(f"*** Move to: {target}")
                lines += self.chunks(texts)
                if kind == "move":
                    files.pop(path, None)
                    files[target] = texts
        return tree, self.envelope(lines)

    def envelope(self, lines: list[str]) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.03:
            lines = lines + [f"*** Bogus {self.counter}"]
        elif roll < 0.06 and lines:
            lines = lines[:-1] + ["\t" + lines[-1]]
        if rng.random() < 0.1:
            lines = [
                "  " + line if line.startswith("*** ") and "File" in line else line
                for line in lines
            ]
        patch = "\n".join(["*** Begin Patch", *lines, "*** End Patch"])
        roll = rng.random()
        if roll < 0.04:
            patch = patch.removesuffix("*** End Patch")
        elif roll < 0.09:
            patch = "<<'EOF'\n" + patch + "\nEOF\n"
        elif roll < 0.14:
            patch = patch.replace("\n", "\r\n")
        if rng.random() < 0.3:
            patch += "\n"
        return patch


BATCHES = 8
PER_BATCH = 50


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_cases_agree(binary: Path, batch: int) -> None:
    gen = Gen(seed=20240 + batch)
    failures: list[str] = []
    counts = {"both ok": 0, "both failed": 0}
    for number in range(PER_BATCH):
        files, patch = gen.case()
        ref, ours, agree = compare(binary, files, patch)
        if agree:
            counts["both ok" if ref.ok else "both failed"] += 1
        else:
            failures.append(f"case {batch}/{number}:\n" + describe(files, patch, ref, ours))
    assert not failures, f"{len(failures)} disagreement(s)\n\n" + "\n\n".join(failures[:5])
    # The generator must exercise both outcomes in earnest.
    assert counts["both ok"] >= PER_BATCH // 4, counts
    assert counts["both failed"] >= PER_BATCH // 10, counts


def test_generator_is_deterministic() -> None:
    first: Callable[[], tuple[Tree, str]] = Gen(seed=7).case
    second: Callable[[], tuple[Tree, str]] = Gen(seed=7).case
    assert [first() for _ in range(5)] == [second() for _ in range(5)]
