#!/usr/bin/env bash
# The whole test suite: builds the package and its tests, the preload library beside them, and
# runs every test. The end-to-end tests run the built `heapline` on real child programs.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
bash Tools/build-preload.sh debug >/dev/null
swift test --skip-build --parallel --num-workers 2
