#!/usr/bin/env bash
# Installs what the tts tests (tests/tools/test_tts.py) need: Debian's espeak-ng (the speech
# engine the tts tool runs) and sox (its soxi measures the WAV files they write).
# Idempotent: a second run checks and returns at once. Needs root (or sudo) for apt-get.
set -euo pipefail
if ! command -v espeak-ng >/dev/null || ! command -v soxi >/dev/null; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends espeak-ng sox >/dev/null
fi
command -v espeak-ng >/dev/null || { echo "audio-test-deps.sh: espeak-ng is missing" >&2; exit 1; }
command -v soxi >/dev/null || { echo "audio-test-deps.sh: soxi (sox) is missing" >&2; exit 1; }
echo "espeak-ng: $(espeak-ng --version | head -1)"
