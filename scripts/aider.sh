#!/usr/bin/env bash
# Installs Aider (PyPI `aider-chat`, pinned) into a virtual environment of its own, kept out of
# the project's .venv:
#   ${XDG_CACHE_HOME:-~/.cache}/totem-dev/aider-venv
# A second run does nothing. Prints the path of the `aider` command on its last line (the
# venv's python, which bench/exercism runs Aider's harness with, is beside it).
# bench/exercism uses it to run Aider's own benchmark side by side with totem.
set -euo pipefail
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/totem-dev"
VENV="$CACHE/aider-venv"
VERSION="${AIDER_VERSION:-0.86.2}"
PY="${PYTHON:-python3}"
mkdir -p "$CACHE"

installed() {
  [ -x "$VENV/bin/aider" ] && "$VENV/bin/python" -c \
    "import importlib.metadata as m, sys; sys.exit(m.version('aider-chat') != '$VERSION')" 2>/dev/null
}

if ! installed; then
  rm -rf "$VENV.tmp"
  "$PY" -m venv "$VENV.tmp"
  "$VENV.tmp/bin/python" -m pip install -q --disable-pip-version-check \
    "aider-chat==$VERSION" 2>&1 | grep -v '^WARNING' || true
  [ -x "$VENV.tmp/bin/aider" ] || { echo "aider.sh: the install failed" >&2; exit 1; }
  rm -rf "$VENV"
  mv "$VENV.tmp" "$VENV"
  # a venv's scripts name their interpreter by absolute path: fix them after the move
  grep -rlI "$VENV.tmp" "$VENV/bin" | xargs -r sed -i "s#$VENV.tmp#$VENV#g"
fi
echo "$VENV/bin/aider"
