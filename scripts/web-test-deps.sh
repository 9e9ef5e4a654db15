#!/usr/bin/env bash
# Installs what the browser tests of `totem serve` (tests/web, marked `web`) need:
#   Debian's Chromium (packages chromium + chromium-driver: /usr/bin/chromium)
#   the Python `playwright` package in the project's .venv, which drives that Chromium
#   through `executable_path` (never `playwright install`: no browser is downloaded).
# Idempotent: a second run checks and returns at once. Needs root (or sudo) for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV_PY="${VENV_PY:-.venv/bin/python}"
PLAYWRIGHT_VERSION="${PLAYWRIGHT_VERSION:-1.65.2}"

if [ ! -x /usr/bin/chromium ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
fi
[ -x /usr/bin/chromium ] || { echo "web-test-deps.sh: /usr/bin/chromium is missing" >&2; exit 1; }

if ! "$VENV_PY" -c "import playwright.sync_api" 2>/dev/null; then
  "$VENV_PY" -m pip install -q --disable-pip-version-check "playwright==$PLAYWRIGHT_VERSION"
fi
"$VENV_PY" -c "import playwright.sync_api" 
echo "chromium: $(/usr/bin/chromium --version 2>/dev/null | head -1)"
