#!/usr/bin/env bash
# Allocation-churn benchmark: Heapline beside heaptrack, on the same workloads, in one run.
#
# From a clean clone:
#   swift build -c release
#   Tools/build-preload.sh release
#   Tools/Benchmarks/run.sh
#
# Environment:
#   HEAPLINE          the CLI (default .build/release/heapline)
#   HEAPLINE_PRELOAD  passed through to `heapline record` (default: the library beside the CLI)
#   HEAPTRACK         heaptrack's launcher script (default: heaptrack on PATH)
#   RUNS              quiet runs per cell; the table shows the best (default 5)
#   PAIRS             malloc/free pairs, or Swift instances, per churn (default 3000000)
#   ROWS              rows of the Python JSON round trip (default 150000)
#   ONLY="a b"        only these workloads, in this order (default: all)
#   QUICK=1           a smoke test: 1 run, 30000 pairs, 3000 rows (RUNS, PAIRS, ROWS still win)
#   KEEP=1            keep the build directory with the binaries and traces of the last run
#
# Workloads (sources beside this script):
#   c-1thread   churn.c, PAIRS pairs on the main thread
#   c-2threads  churn.c, the same PAIRS split over two threads: same events, plus contention
#   c-4threads  churn.c, the same PAIRS split over four threads
#   swift       churn.swift, PAIRS class instances made and dropped (swiftc -O)
#   python      json_roundtrip.py under python3 with PYTHONMALLOC=malloc: a JSON round trip
#               of ROWS rows, every object a malloc block (about 2 M live at the peak with
#               150,000 rows), as issue 10 measured
# After each workload's runs, every analysis (report, timeline, leaks, objects, diff, export)
# runs on the last Heapline trace, and heaptrack_print on the last heaptrack file (with --diff,
# the yardstick of diff; with -n and -s 1000000, every backtrace, that of the report of every
# stack), taking turns RUNS times; each shows its best wall time, CPU and peak RSS.
# `heapline record` keeps the symbolizer's answers by build ID (README, "Record any program"):
# the first run of a workload looks up libc's debug information, the runs after it do not.
# Each malloc is 18 to 20 frames deep. The C code is built -O2 -g -fomit-frame-pointer, as
# Debian builds its packages: both tracers must unwind with DWARF CFI, never frame pointers.
#
# CPU time is user + sys of the whole process tree, so heaptrack's bill includes
# heaptrack_interpret and zstd, which run beside the program, and Heapline's its sampler thread
# and in-process compression. The launcher makes itself a child subreaper and reaps every
# descendant, so a helper that outlives its parent is still counted, and its output complete.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
heapline="${HEAPLINE:-$root/.build/release/heapline}"
heaptrack="${HEAPTRACK:-$(command -v heaptrack || true)}"

[ -x "$heapline" ] || { echo "no heapline CLI at $heapline: swift build -c release" >&2; exit 1; }
[ -n "$heaptrack" ] || { echo "heaptrack not found: set HEAPTRACK" >&2; exit 1; }
if [ -n "${HEAPLINE_PRELOAD:-}" ]; then
  [ -r "$HEAPLINE_PRELOAD" ] || { echo "HEAPLINE_PRELOAD=$HEAPLINE_PRELOAD unreadable" >&2; exit 1; }
elif [ ! -r "$(dirname "$heapline")/libheapline-preload.so" ]; then
  echo "no preload library beside $heapline: Tools/build-preload.sh release" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/heapline-bench.XXXXXX")"
if [ "${KEEP:-0}" = 1 ]; then echo "keeping $work"; else trap 'rm -rf "$work"' EXIT; fi

echo "building workloads in $work"
"${CC:-cc}" -O2 -g -fomit-frame-pointer -pthread -o "$work/churn" "$here/churn.c"
swiftc -O -g -module-name churn -o "$work/churn-swift" "$here/churn.swift"

# The measuring and the table are easier in Python; it gets its inputs from the environment.
export BENCH_ONLY="${ONLY:-}" BENCH_WORK="$work" BENCH_HEAPLINE="$heapline" BENCH_HEAPTRACK="$heaptrack"
if [ "${QUICK:-0}" = 1 ]; then
  export BENCH_RUNS="${RUNS:-1}" BENCH_PAIRS="${PAIRS:-30000}" BENCH_ROWS="${ROWS:-3000}"
else
  export BENCH_RUNS="${RUNS:-5}" BENCH_PAIRS="${PAIRS:-3000000}" BENCH_ROWS="${ROWS:-150000}"
fi
python3 -u "$here/bench.py"
