#!/usr/bin/env bash
# Leak-check benchmark: what checking for leaks at exit adds to a run, under Heapline,
# LeakSanitizer and Valgrind's memcheck, side by side, on the same program (leakbench.c: 2,000,000
# live blocks of 100 bytes, about 200 MB, in linked lists, and 1,000 of them leaked: 100,000
# bytes). Each tool runs the program twice, without its leak check and with it; the difference
# is the check's cost. Every check must find exactly the 1,000 blocks and 100,000 bytes. Wall
# times of whole runs are noisy, so each tool also runs the program once more with a check
# made from inside it (LEAKBENCH_CHECK: heapline_check_leaks, __lsan_do_recoverable_leak_check,
# VALGRIND_DO_LEAK_CHECK), which the program times by itself: the "check alone" column.
#
# From a clean clone:
#   swift build -c release
#   Tools/build-preload.sh release
#   Tools/LeakBenchmark/run.sh
#
# Environment:
#   HEAPLINE          the CLI (default .build/release/heapline)
#   HEAPLINE_PRELOAD  passed through to `heapline record` (default: the library beside the CLI)
#   CLANG             a clang with LeakSanitizer's runtime (default: clang on PATH; the Swift
#                     toolchain's has it)
#   VALGRIND          valgrind (default: valgrind on PATH; skipped when there is none)
#   RUNS              runs per cell, the table shows the best (default 3; Valgrind's 1)
#   LISTS NODES LEAKS the workload's shape (default 2000 1000 1000)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
heapline="${HEAPLINE:-$root/.build/release/heapline}"
clang="${CLANG:-$(command -v clang || true)}"
valgrind="${VALGRIND:-$(command -v valgrind || true)}"

[ -x "$heapline" ] || { echo "no heapline CLI at $heapline: swift build -c release" >&2; exit 1; }
[ -n "$clang" ] || { echo "clang not found: set CLANG" >&2; exit 1; }
if [ -z "${HEAPLINE_PRELOAD:-}" ] && [ ! -r "$(dirname "$heapline")/libheapline-preload.so" ]; then
  echo "no preload library beside $heapline: Tools/build-preload.sh release" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/heapline-leakbench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$clang" -O2 -g -o "$work/leakbench" "$here/leakbench.c"
"$clang" -O2 -g -fsanitize=leak -o "$work/leakbench-lsan" "$here/leakbench.c"

export BENCH_WORK="$work" BENCH_HEAPLINE="$heapline" BENCH_VALGRIND="$valgrind"
export BENCH_RUNS="${RUNS:-3}" BENCH_SHAPE="${LISTS:-2000} ${NODES:-1000} ${LEAKS:-1000}"
python3 -u - <<'PYTHON'
import json, os, re, subprocess, sys, time

work, heapline, valgrind = (os.environ[k] for k in ("BENCH_WORK", "BENCH_HEAPLINE", "BENCH_VALGRIND"))
runs, shape = int(os.environ["BENCH_RUNS"]), os.environ["BENCH_SHAPE"].split()
leaks = int(shape[2])
program, lsan = [f"{work}/leakbench"] + shape, [f"{work}/leakbench-lsan"] + shape

def best(argv, env=None, count=runs):
    """Best wall time of `count` runs of argv, and the last run's combined output."""
    times, output = [], ""
    for _ in range(count):
        start = time.perf_counter()
        proc = subprocess.run(argv, env=dict(os.environ, **(env or {})), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              errors="replace")
        times.append(time.perf_counter() - start)
        output = proc.stdout
    return min(times), output

def timed_check(argv, env=None, count=runs):
    """Best time of the check that the program makes and times itself, and the last output."""
    times, output = [], ""
    for _ in range(count):
        output = best(argv, dict(env or {}, LEAKBENCH_CHECK="1"), count=1)[1]
        m = re.search(r"timed check \((\w+)\): ([\d.]+) s", output)
        if not m or m.group(1) == "none":
            sys.exit(f"no timed check in the output of {argv[0]}:\n{output[-2000:]}")
        times.append(float(m.group(2)))
    return min(times), output

rows = []
base, _ = best(program)
rows.append(("untraced", base, None, None, "-", "-"))

# LeakSanitizer: its runtime is linked in; detect_leaks=0 turns the exit check off.
off, _ = best(lsan, {"LSAN_OPTIONS": "detect_leaks=0"})
on, out = best(lsan, {"LSAN_OPTIONS": "detect_leaks=1:exitcode=0"})
m = re.search(r"SUMMARY: LeakSanitizer: (\d+) byte\(s\) leaked in (\d+) allocation", out)
found = f"{int(m.group(2)):,} blocks, {int(m.group(1)):,} B" if m else "nothing"
alone, out = timed_check(lsan, {"LSAN_OPTIONS": "detect_leaks=1:exitcode=0"})
m = re.search(r"SUMMARY: LeakSanitizer: (\d+) byte\(s\) leaked in (\d+) allocation", out)
found_alone = f"{int(m.group(2)):,} blocks, {int(m.group(1)):,} B" if m else "nothing"
rows.append(("LeakSanitizer", on, off, alone, found, found_alone))

# Heapline: `record --no-leaks` against `record` (which scans at exit); the scan's own time
# comes from the trace.
trace = f"{work}/leakbench.trace"
off, _ = best([heapline, "record", "--no-leaks", "-o", trace, "--"] + program)
on, _ = best([heapline, "record", "-o", trace, "--"] + program)
report = subprocess.run([heapline, "leaks", trace, "--format", "json", "--no-symbolize"],
                        stdout=subprocess.PIPE, text=True)
data = json.loads(report.stdout)
lost = data["definitely_lost"]
found = f"{lost['blocks']:,} blocks, {lost['bytes']:,} B"
if data["indirectly_lost"]["blocks"] or data["possibly_lost"]["blocks"]:
    found += " (and more: wrong)"
alone, out = timed_check([heapline, "record", "--no-leaks", "-o", trace, "--"] + program)
m = re.search(r"timed check \(heapline\): [\d.]+ s, (\d+) blocks, (\d+) bytes", out)
found_alone = f"{int(m.group(1)):,} blocks, {int(m.group(2)):,} B" if m else "nothing"
exit_scan = data["scan"]["total_ns"] / 1e9
rows.append(("Heapline", on, off, alone, found, found_alone))

# Valgrind's memcheck: --leak-check=no against full; slow, so run once.
if valgrind:
    off, _ = best([valgrind, "--leak-check=no"] + program, count=1)
    on, out = best([valgrind, "--leak-check=full", "--show-leak-kinds=definite"] + program, count=1)
    m = re.search(r"definitely lost: ([\d,]+) bytes in ([\d,]+) blocks", out)
    found = f"{m.group(2)} blocks, {m.group(1)} B" if m else "nothing"
    alone, out = timed_check([valgrind, "--leak-check=no"] + program, count=1)
    m = re.search(r"timed check \(valgrind\): [\d.]+ s, (\d+) blocks, (\d+) bytes", out)
    found_alone = f"{int(m.group(1)):,} blocks, {int(m.group(2)):,} B" if m else "nothing"
    rows.append(("Valgrind memcheck", on, off, alone, found, found_alone))

print(f"\n{int(shape[0]) * int(shape[1]):,} live blocks of 100 bytes, {leaks:,} leaked; best of {runs}")
print(f"{'tool':<18} {'run with check':>15} {'without':>9} {'check adds':>11} {'check alone':>12}"
      f"  {'found at exit':<24} found by the check alone")
for name, on, off, alone, found, found_alone in rows:
    extra = f"{on - off:10.2f}s" if off is not None else f"{'-':>11}"
    without = f"{off:8.2f}s" if off is not None else f"{'-':>9}"
    own = f"{alone:11.3f}s" if alone is not None else f"{'-':>12}"
    print(f"{name:<18} {on:14.2f}s {without} {extra} {own}  {found:<24} {found_alone}")
print(f"Heapline's exit scan, from the trace: {exit_scan:.3f} s")
PYTHON
