"""Copies named Exercism Python practice exercises out of a git mirror of `exercism/python`,
in the layout the runner reads (NAME/.docs, NAME/.meta/config.json, the example, the stub and
the test file), with Exercism's LICENSE and the commit they came from.

    python bench/exercism/vendor.py --git-dir /work/.mirror/exercism+python/repo \
        --names names.txt --dest bench/exercism/exercises

Only the files the harness needs travel: `.docs/*.md`, `.meta/config.json` and the files its
"files" lists (solution, test, example).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path, PurePosixPath


def _git(git_dir: Path, *args: str) -> bytes:
    done = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {done.stderr.decode()[-500:]}")
    return done.stdout


def _wanted(git_dir: Path, rev: str, name: str) -> list[str]:
    """The paths (relative to the exercise folder) that the harness needs for `name`."""
    base = f"exercises/practice/{name}"
    listing = _git(git_dir, "ls-tree", "-r", "--name-only", rev, "--", base).decode().split()
    if not listing:
        raise SystemExit(f"no exercise {name!r} in {git_dir} at {rev}")
    relative = [str(PurePosixPath(path).relative_to(base)) for path in listing]
    config = json.loads(_git(git_dir, "show", f"{rev}:{base}/.meta/config.json"))
    files = config.get("files", {})
    listed = {path for key in ("solution", "test", "example") for path in files.get(key, [])}
    docs = {path for path in relative if path.startswith(".docs/") and path.endswith(".md")}
    return sorted(listed | docs | {".meta/config.json"})


def vendor(git_dir: Path, names: list[str], dest: Path, *, rev: str = "HEAD") -> str:
    """Writes each exercise under `dest/NAME/`; returns the commit they were taken from."""
    commit = _git(git_dir, "rev-parse", rev).decode().strip()
    for name in names:
        for relative in _wanted(git_dir, commit, name):
            target = dest / name / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            blob = f"{commit}:exercises/practice/{name}/{relative}"
            target.write_bytes(_git(git_dir, "show", blob))
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "LICENSE").write_bytes(_git(git_dir, "show", f"{commit}:LICENSE"))
    (dest / "SOURCE.md").write_text(
        "These exercises are Exercism's Python practice exercises, copied unchanged from\n"
        f"https://github.com/exercism/python at commit {commit}\n"
        "(exercises/practice/NAME: .docs/*.md, .meta/config.json and the solution, test and\n"
        "example files it lists), under Exercism's MIT licence (LICENSE, beside this file).\n"
        "Made by bench/exercism/vendor.py.\n"
    )
    return commit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--git-dir", type=Path, required=True, help="a clone or bare mirror")
    parser.add_argument("--names", type=Path, required=True, help="exercise names, one a line")
    parser.add_argument("--dest", type=Path, required=True)
    parser.add_argument("--rev", default="HEAD")
    args = parser.parse_args()
    names = [line.strip() for line in args.names.read_text().splitlines() if line.strip()]
    commit = vendor(args.git_dir, names, args.dest, rev=args.rev)
    print(f"{len(names)} exercises from {commit} in {args.dest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
