#!/usr/bin/env bash
# Measures other revisions beside this one, in the same session (same machine, same load):
#   bash bench/compare.sh REV [REV...]      e.g. bash bench/compare.sh a4680ec HEAD
# Each revision is checked out in a temporary worktree with its own virtual environment
# (dependencies come from pip's cache); bench/turns.py of THIS checkout drives each build.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
runs="${RUNS:-7}"
for rev in "$@"; do
  sha=$(git -C "$here" rev-parse --short "$rev")
  dir="${TMPDIR:-/tmp}/totem-bench-$sha"
  if [ ! -x "$dir/.venv/bin/totem" ]; then
    rm -rf "$dir"
    git -C "$here" worktree add -f --detach "$dir" "$sha" >/dev/null 2>&1
    python3 -m venv "$dir/.venv"
    "$dir/.venv/bin/pip" install -q --disable-pip-version-check -e "$dir" 2>&1 \
      | grep -v '^WARNING' || true
  fi
  TOTEM_BIN="$dir/.venv/bin/totem" TOTEM_BENCH_LABEL="$rev ($sha)" \
    "$here/.venv/bin/python" "$here/bench/turns.py" --runs "$runs"
done
