#!/usr/bin/env bash
# Sets up a fresh Debian machine and runs the main job: records the bundled demo program and
# prints its report.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ] && ! pkg-config --exists libunwind libzstd libjpeg libpng16 2>/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libunwind-dev libzstd-dev libjpeg62-turbo-dev libpng-dev >/dev/null
fi
swift build -c release
bash Tools/build-preload.sh release >/dev/null
trace="${TMPDIR:-/tmp}/heapline-demo.trace"
.build/release/heapline record -o "$trace" -- .build/release/heapline-demo
.build/release/heapline report "$trace"
