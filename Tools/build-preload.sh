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
# libgcc_s comes before libunwind among the library's needs, so that the loader finds its
# _Unwind_* functions first: libunwind exports functions of the same names, and glibc's
# cancellation of a thread inside stdio ran the cleanup of its lock through libunwind's with
# libgcc's unwinder (the lock stayed taken, and the program's next write to the stream hung).
# Link-time optimization inlines across the shim's files (a malloc passes through six of them):
# about 6 % of the recording's CPU on the C churn. It needs the toolchain's own linker, lld.
# shellcheck disable=SC2086
"$cc" $opt -g -flto -fuse-ld=lld -Wl,-z,now -Wl,--version-script="$root/Tools/preload-exports.map" \
  -std=gnu11 -fPIC -shared -ftls-model=initial-exec \
  -DUNW_LOCAL_ONLY -D_GNU_SOURCE -DHL_PRELOAD -Wall -Wextra -Wno-unused-parameter \
  -I"$root/Sources/CHeapline/include" \
  -o "$out/libheapline-preload.so.tmp" "$root"/Sources/CHeapline/*.c \
  -Wl,--no-as-needed -lgcc_s -lunwind -lzstd -lpthread -ldl
mv "$out/libheapline-preload.so.tmp" "$out/libheapline-preload.so"
echo "$out/libheapline-preload.so"
