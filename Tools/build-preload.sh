#!/usr/bin/env bash
# Builds the preload library from the shim's C sources, next to the `heapline` executable of the
# given configuration (debug or release). SwiftPM cannot build it: a dynamic product made of the
# C target still links libswiftCore, and the preload library must not load the Swift runtime.
set -euo pipefail
config="${1:-debug}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.build/$config"
mkdir -p "$out/"
cc="${CC:-clang}"
opt="-O2"
[ "$config" = debug ] && opt="-O1 -g"
# shellcheck disable=SC2086
"$cc" $opt -g -std=gnu11 -fPIC -shared -fvisibility=default -ftls-model=initial-exec \
  -DUNW_LOCAL_ONLY -D_GNU_SOURCE -DHL_PRELOAD -Wall -Wextra -Wno-unused-parameter \
  -I"$root/Sources/CHeapline/include" \
  -o "$out/libheapline-preload.so.tmp" "$root"/Sources/CHeapline/*.c \
  -lunwind -lzstd -lpthread -ldl
mv "$out/libheapline-preload.so.tmp" "$out/libheapline-preload.so"
echo "$out/libheapline-preload.so"
