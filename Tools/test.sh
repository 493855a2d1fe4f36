#!/usr/bin/env bash
# The whole test suite: builds the package and its tests, the preload library beside them, and
# runs every test. The end-to-end tests run the built `heapline` on real child programs.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
bash Tools/build-preload.sh debug >/dev/null
# Every file the tests make (traces, fixtures, their programs' temporary files) goes under one
# directory that goes when the run ends: a run leaves about 400 directories and 400 MB, which
# repeated runs would pile up in /tmp.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/heapline-tests.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
TMPDIR=$scratch swift test --skip-build --parallel --num-workers 2
