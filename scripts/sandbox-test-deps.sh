#!/usr/bin/env bash
# Installs what the sandbox tests (tests/sandbox, tests/e2e/test_sandbox_attacks.py) need:
# Debian's bubblewrap (the Linux sandbox of bash and process). Idempotent. Needs root or sudo.
set -euo pipefail
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
