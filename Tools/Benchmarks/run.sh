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
#   PAIRS             malloc/free pairs, or Swift instances, per workload (default 3000000)
#   KEEP=1            keep the build directory with the binaries and traces of the last run
#
# Workloads (sources beside this script):
#   c-1thread   churn.c, PAIRS pairs on the main thread
#   c-2threads  churn.c, the same PAIRS split over two threads: same events, plus contention
#   swift       churn.swift, PAIRS class instances made and dropped (swiftc -O)
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
export BENCH_WORK="$work" BENCH_HEAPLINE="$heapline" BENCH_HEAPTRACK="$heaptrack"
export BENCH_RUNS="${RUNS:-5}" BENCH_PAIRS="${PAIRS:-3000000}"
python3 -u - <<'PYTHON'
import ctypes, glob, json, os, resource, struct, subprocess, sys, time

work, heapline, heaptrack = (os.environ[f"BENCH_{k}"] for k in ("WORK", "HEAPLINE", "HEAPTRACK"))
runs, pairs = int(os.environ["BENCH_RUNS"]), int(os.environ["BENCH_PAIRS"])

# Depths chosen so that each malloc has 18-20 callers up to _start or clone3 (checked in gdb):
# C adds a leaf, a path, run, main (or start_thread) and libc's start-up frames to the
# recursion; Swift adds swift_slowAlloc, swift_allocObject, makeInstance and churn.
WORKLOADS = [
    ("c-1thread", [f"{work}/churn", str(pairs), "1", "12"]),
    ("c-2threads", [f"{work}/churn", str(pairs), "2", "12"]),
    ("swift", [f"{work}/churn-swift", str(pairs), "11"]),
]

# PR_SET_CHILD_SUBREAPER: orphaned descendants (heaptrack's background pipeline) become our
# children, so that waiting for them both completes their output and adds their CPU time to
# RUSAGE_CHILDREN.
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
    sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed: CPU times would miss orphaned helpers")

def busy_seconds():
    """CPU time the whole machine has spent busy, steal included (first line of /proc/stat)."""
    with open("/proc/stat") as f:
        user, nice, system, idle, iowait, irq, softirq, steal = map(int, f.readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")

def measure(argv):
    """Runs argv to completion with all its descendants.

    Returns (wall s, CPU s, foreign CPU s, stdout+stderr). Foreign CPU is what the rest of the
    machine used meanwhile: on a 2-CPU machine, any of it competes with the tracers' helpers.
    """
    before, busy = resource.getrusage(resource.RUSAGE_CHILDREN), busy_seconds()
    start = time.perf_counter()
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace")
    while True:  # reap whatever the launcher left running
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    foreign = busy_seconds() - busy - cpu
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(argv)}\n{proc.stdout[-2000:]}")
    return wall, cpu, foreign, proc.stdout

def heaptrack_file(prefix):
    """heaptrack appends .zst or .gz to -o, depending on what it found at install time."""
    made = [f for f in glob.glob(prefix + ".*") if not f.endswith(".raw")]
    return made[0] if len(made) == 1 else None

def run_mode(mode, argv, name):
    trace = f"{work}/{name}.{mode}"
    for f in glob.glob(trace + "*"):
        os.remove(f)
    if mode == "untraced":
        return measure(argv), None
    if mode == "heapline":
        return measure([heapline, "record", "-o", trace + ".trace", "--"] + argv), trace + ".trace"
    return measure([heaptrack, "-o", trace] + argv), heaptrack_file(trace)

def trailer_counts(path):
    """ALLOC and FREE records from the trace's trailer chunk (TraceFormat.md), or None."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() < 48 + 88:
            return None
        f.seek(-88, os.SEEK_END)
        tail = f.read(88)
    magic, kind = struct.unpack_from("<IB", tail, 0)
    if magic != 0x4B434C48 or kind != 2:
        return None
    return struct.unpack_from("<QQ", tail, 48 + 16)

def find_count(node, keys=("allocations", "allocationCount", "totalAllocations", "allocs")):
    """The first integer under one of `keys`, breadth first: the report schema is young."""
    queue = [node]
    while queue:
        n = queue.pop(0)
        if isinstance(n, dict):
            for k in keys:
                if isinstance(n.get(k), int):
                    return n[k]
            queue.extend(n.values())
        elif isinstance(n, list):
            queue.extend(n)
    return None

def report_count(path):
    try:
        r = subprocess.run([heapline, "report", path, "--format", "json"], capture_output=True,
                           text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return "report timed out"
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or ["no output"])[0][:160]
        return f"report unavailable ({why})"
    try:
        count = find_count(json.loads(r.stdout))
    except ValueError:
        return "report JSON unparsable"
    return f"report: {count} allocations" if count is not None else "report: no allocation count"

def heaptrack_count(out):
    for line in out.splitlines():  # heaptrack_interpret's summary: "allocations:   N"
        if line.strip().startswith("allocations:"):
            return int(line.split()[-1])
    return None

MODES = ("untraced", "heapline", "heaptrack")
# A build running beside the benchmark inflates every cell, and the ratios by different amounts.
load = os.getloadavg()[0]
if load > 0.5 * (os.cpu_count() or 1):
    print(f"warning: load average {load:.1f} on {os.cpu_count()} CPUs: other work will skew "
          "the numbers; rerun on a quiet machine", file=sys.stderr)
results, checks = {}, []
started = time.perf_counter()
disturbed = 0
for name, argv in WORKLOADS:
    cells, clean = {m: [] for m in MODES}, {m: [] for m in MODES}
    # A run during which other processes took CPU is repeated, up to twice the runs: on this
    # size of machine one compile beside us doubles heaptrack's wall time.
    for r in range(2 * runs):
        if all(len(clean[m]) >= runs for m in MODES):
            break
        for mode in MODES:  # interleaved, so that drift of the machine hits every mode alike
            (wall, cpu, foreign, out), trace = run_mode(mode, argv, name)
            size = os.path.getsize(trace) if trace else 0
            cells[mode].append((wall, cpu, size, trace, out))
            quiet = foreign < 0.05 + 0.05 * wall  # /proc/stat counts in 10 ms ticks
            if quiet:
                clean[mode].append(cells[mode][-1])
            disturbed += not quiet
            print(f"  {name} run {r + 1} {mode:9} {wall:6.2f} s wall {cpu:6.2f} s CPU"
                  f"{'' if quiet else f'  (disturbed: {foreign:.2f} s foreign CPU)'}",
                  file=sys.stderr)
    # Best of the runs, not the median: other work on the machine only ever adds time.
    results[name] = {m: (min(c[0] for c in (clean[m] or cs)), min(c[1] for c in (clean[m] or cs)),
                         cs[-1][2], not clean[m]) for m, cs in cells.items()}
    hl_trace, ht_out = cells["heapline"][-1][3], cells["heaptrack"][-1][4]
    counts = trailer_counts(hl_trace)
    trailer = (f"trailer: {counts[0]} allocs, {counts[1]} frees" if counts
               else "trailer: missing or unreadable")
    ok = counts is not None and pairs <= counts[0] <= pairs + 1000 and counts[1] >= pairs
    checks.append(f"{name:11} expected >= {pairs} allocs | heapline {trailer}; "
                  f"{report_count(hl_trace)} | heaptrack: {heaptrack_count(ht_out)} allocations"
                  f" | {'OK' if ok else 'MISMATCH'}")

def mib(n):
    return f"{n / 1048576:.1f} MiB" if n >= 1048576 else f"{n / 1024:.0f} KiB"

print(f"\nAllocation churn: {pairs} pairs per workload, best of {runs} runs, "
      f"{os.cpu_count()} CPUs (wall s / CPU s, ratio to untraced)")
head = ("workload", "untraced", "heapline", "x wall/CPU", "heaptrack", "x wall/CPU",
        "HL/HT CPU", "trace HL", "trace HT")
rows = []
for name, r in results.items():
    (uw, uc, _, ud), (hw, hc, hs, hd), (tw, tc, ts, td) = (r[m] for m in MODES)
    mark = lambda noisy: "*" if noisy else ""  # no undisturbed run
    rows.append((name, f"{uw:.2f}/{uc:.2f}{mark(ud)}", f"{hw:.2f}/{hc:.2f}{mark(hd)}",
                 f"{hw / uw:.1f}/{hc / uc:.1f}", f"{tw:.2f}/{tc:.2f}{mark(td)}",
                 f"{tw / uw:.1f}/{tc / uc:.1f}", f"{hc / tc:.2f}", mib(hs), mib(ts)))
widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
for row in [head] + rows:
    print("  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w)
                    for i, (x, w) in enumerate(zip(row, widths))))
print("\nCorrectness (last run of each workload):")
for line in checks:
    print("  " + line)
if disturbed:
    print(f"\n{disturbed} runs overlapped other work and were repeated"
          + ("; * marks a cell with no quiet run" if any(r[m][3] for r in results.values()
                                                        for m in MODES) else ""))
print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")
PYTHON
