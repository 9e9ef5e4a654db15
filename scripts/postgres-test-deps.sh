#!/usr/bin/env bash
# Installs what the PostgreSQL store tests need: Debian's `postgresql` package (initdb and the
# server; the tests start their own server in a temporary folder, never the system one).
# Idempotent: a second run checks and returns at once. Needs root (or sudo) for apt-get.
set -euo pipefail
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
  || { echo "postgres-test-deps.sh: initdb is missing" >&2; exit 1; }
echo "postgresql: $(ls -d /usr/lib/postgresql/*/ | head -1)"
