#!/usr/bin/env bash
# The whole test suite: builds the package and its tests, the preload library beside them, and
# runs every test. The end-to-end tests run the built `heapline` on real child programs.
set -euo pipefail
# Made before the cd, so that a relative TMPDIR means the caller's; one that is not there is
# left for /tmp, as mktemp and the tests would do.
tmp="${TMPDIR:-/tmp}"
[ -d "$tmp" ] || tmp=/tmp
scratch=$(mktemp -d "$tmp/heapline-tests.XXXXXX")
scratch=$(cd "$scratch" && pwd)
trap 'rm -rf "$scratch"' EXIT
cd "$(dirname "$0")/.."
swift build --build-tests
bash Tools/build-preload.sh debug >/dev/null
# Every file the tests make (traces, fixtures, their programs' temporary files) goes under one
# directory (above) that goes when the run ends: a run leaves about 400 directories and 400 MB,
# which repeated runs would pile up in /tmp.
TMPDIR=$scratch swift test --skip-build --parallel --num-workers 2
