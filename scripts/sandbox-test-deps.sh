#!/usr/bin/env bash
# Installs what the sandbox tests (tests/sandbox, tests/e2e/test_sandbox_attacks.py) need:
# Debian's bubblewrap (the Linux sandbox of bash and process). Idempotent. Needs root or sudo.
# Then says whether bwrap can run here: in a container without user namespaces or mounts it
# cannot, totem runs commands without the sandbox (asked for, as `totem doctor` says), and the
# tests that need the real sandbox are skipped with bwrap's own words (tests/support/sandbox.py).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV_PY="${VENV_PY:-.venv/bin/python}"
if ! command -v bwrap >/dev/null; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null 2>&1 || {
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null
  }
fi
command -v bwrap >/dev/null || { echo "sandbox-test-deps.sh: bwrap is missing" >&2; exit 1; }
echo "bwrap: $(bwrap --version)"
"$VENV_PY" -c 'from totem.sandbox.backend import available
found = available()
print("sandbox: works here, commands run in bwrap" if found.works else
      f"sandbox: OFF on this machine, commands are asked for instead: {found.reason}")'
