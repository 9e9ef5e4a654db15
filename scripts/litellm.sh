#!/usr/bin/env bash
# Installs the LiteLLM proxy (PyPI `litellm[proxy]`, about 750 MB) into a virtual environment
# of its own, kept out of the project's .venv:
#   ${XDG_CACHE_HOME:-~/.cache}/totem-dev/litellm-venv
# A second run does nothing. Prints the path of the `litellm` command on its last line.
# The e2e tests marked `litellm` use it (tests/e2e/test_litellm_proxy.py); they are skipped
# while it is absent unless TOTEM_REQUIRE_LITELLM=1.
set -euo pipefail
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/totem-dev"
VENV="$CACHE/litellm-venv"
# 1.108.7: what pip picks for `litellm[proxy]` here; 1.110.x's proxy extra requires a
# `litellm-proxy` distribution that PyPI does not carry.
VERSION="${LITELLM_VERSION:-1.108.7}"
PY="${PYTHON:-python3}"
mkdir -p "$CACHE"

if [ ! -x "$VENV/bin/litellm" ]; then
  rm -rf "$VENV.tmp"
  "$PY" -m venv "$VENV.tmp"
  "$VENV.tmp/bin/python" -m pip install -q --disable-pip-version-check \
    "litellm[proxy]==$VERSION" 2>&1 | grep -v '^WARNING' || true
  [ -x "$VENV.tmp/bin/litellm" ] || { echo "litellm.sh: the install failed" >&2; exit 1; }
  rm -rf "$VENV"
  mv "$VENV.tmp" "$VENV"
  # a venv's scripts name their interpreter by absolute path: fix them after the move
  grep -rlI "$VENV.tmp" "$VENV/bin" | xargs -r sed -i "s#$VENV.tmp#$VENV#g"
fi
echo "$VENV/bin/litellm"
