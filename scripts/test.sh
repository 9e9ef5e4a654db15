#!/usr/bin/env bash
# Sets up everything the tests need and runs them all:
#   a virtual environment (.venv) with totem and its test tools,
#   the real servers the tests talk to (npm: aimock, MCP servers, the apply_patch reference;
#   Debian's postgresql for the PostgreSQL store; Ray, a local cluster, for `totem batch`),
#   the CPU model and llama-server (--with-cpu-model) and the LiteLLM proxy (--with-litellm)
#   when asked; their suites also run whenever they are already cached,
# then ruff, mypy and pytest. Other arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
with_model=0
with_litellm=0
while [ $# -gt 0 ]; do
  case "$1" in
    --with-cpu-model) with_model=1; shift ;;
    --with-litellm) with_litellm=1; shift ;;
    *) break ;;
  esac
done

[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test,postgres,batch,lsp]' \
  -r tests/requirements-providers.txt 2>&1 | grep -v '^WARNING: Location' || true
.venv/bin/python -m compileall -q src >/dev/null
(cd tests/node && npm install --no-audit --no-fund --loglevel=error >/dev/null)
bash scripts/web-test-deps.sh  # Debian's chromium + the playwright package (no browser download)
bash scripts/audio-test-deps.sh  # Debian's espeak-ng and sox, for the tts tool's tests
bash scripts/postgres-test-deps.sh  # Debian's postgresql: the store tests start their own server
bash scripts/sandbox-test-deps.sh  # Debian's bubblewrap: the sandbox of bash and process

if [ "$with_model" = 1 ]; then
  PYTHON=.venv/bin/python bash scripts/cpu-model.sh >/dev/null
  export TOTEM_REQUIRE_CPU_MODEL=1
fi
if [ "$with_litellm" = 1 ]; then
  bash scripts/litellm.sh >/dev/null
  export TOTEM_REQUIRE_LITELLM=1
fi
export TOTEM_REQUIRE_SERVERS=1 TOTEM_REQUIRE_WEB=1 TOTEM_REQUIRE_AUDIO=1 TOTEM_REQUIRE_LSP=1
export TOTEM_REQUIRE_SANDBOX=1

.venv/bin/ruff check src tests bench
.venv/bin/mypy
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
