"""Measures the workloads of run.sh untraced, under Heapline and under heaptrack, then the
analyses of each workload's traces against heaptrack_print. Inputs come from run.sh's
environment (BENCH_*)."""
import ctypes, glob, json, os, resource, subprocess, sys, time

work, heapline, heaptrack = (os.environ[f"BENCH_{k}"] for k in ("WORK", "HEAPLINE", "HEAPTRACK"))
runs, pairs = int(os.environ["BENCH_RUNS"]), int(os.environ["BENCH_PAIRS"])
rows = int(os.environ["BENCH_ROWS"])
here = os.path.dirname(os.path.abspath(__file__))
heaptrack_print = os.environ.get("BENCH_HEAPTRACK_PRINT") or "heaptrack_print"
gnu_time = "/usr/bin/time"
if not os.access(gnu_time, os.X_OK):
    sys.exit("GNU time is needed at /usr/bin/time for peak RSS: apt-get install time")
# Every Python object a malloc block, as in issue 10; a fixed hash seed so that every run of
# the interpreter makes the same allocations.
os.environ.update(PYTHONMALLOC="malloc", PYTHONHASHSEED="0")

# Depths chosen so that each malloc has 18-20 callers up to _start or clone3 (checked in gdb):
# C adds a leaf, a path, run, main (or start_thread) and libc's start-up frames to the
# recursion; Swift adds swift_slowAlloc, swift_allocObject, makeInstance and churn.
WORKLOADS = [
    ("c-1thread", [f"{work}/churn", str(pairs), "1", "12"]),
    ("c-2threads", [f"{work}/churn", str(pairs), "2", "12"]),
    ("c-4threads", [f"{work}/churn", str(pairs), "4", "12"]),
    ("swift", [f"{work}/churn-swift", str(pairs), "11"]),
    ("python", [sys.executable, f"{here}/json_roundtrip.py", str(rows)]),
]
CHURNS = {"c-1thread", "c-2threads", "c-4threads", "swift"}
if os.environ.get("BENCH_ONLY"):  # run.sh's ONLY: some workloads, in the order given
    chosen = os.environ["BENCH_ONLY"].split()
    unknown = set(chosen) - {name for name, _ in WORKLOADS}
    if unknown:
        sys.exit(f"ONLY: no workload {' '.join(sorted(unknown))}")
    WORKLOADS = [w for name in chosen for w in WORKLOADS if w[0] == name]

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

def measure(argv, stdout=None):
    """Runs argv to completion with all its descendants.

    Returns (wall s, CPU s, foreign CPU s, peak RSS bytes, output). Peak RSS is the largest of
    any process of the tree (wait4's ru_maxrss, which covers the reaped descendants of each).
    Foreign CPU is what the rest of the machine used meanwhile: on a 2-CPU machine, any of it
    competes with the tracers' helpers. Output is stdout+stderr, unless `stdout` is a path.
    """
    before, busy = resource.getrusage(resource.RUSAGE_CHILDREN), busy_seconds()
    start = time.perf_counter()
    out_path = stdout or f"{work}/output.txt"
    # GNU time forks from its own small image: a fork of this interpreter would carry its
    # RSS into the child's ru_maxrss, which survives exec.
    rss_path = f"{work}/maxrss.txt"
    with open(out_path, "w") as out:
        proc = subprocess.Popen([gnu_time, "-f", "%M", "-o", rss_path] + argv,
                                stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT if stdout is None else subprocess.DEVNULL)
        _, status, _ = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    with open(rss_path) as f:  # "Command exited with non-zero status N" may come first
        peak = int(f.read().split()[-1])
    while True:  # reap whatever the launcher left running
        try:
            _, _, orphan = os.wait4(-1, 0)
            peak = max(peak, orphan.ru_maxrss)
        except ChildProcessError:
            break
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    foreign = busy_seconds() - busy - cpu
    output = "" if stdout else open(out_path, errors="replace").read()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"failed ({code}): {' '.join(argv)}\n{output[-2000:]}")
    return wall, cpu, foreign, peak * 1024, output

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

def report_totals(path):
    """The report's totals (ReportJSON.md), or a one-line reason why there are none."""
    try:
        r = subprocess.run([heapline, "report", path, "--format", "json", "--top", "0"],
                           capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "report timed out"
    if r.returncode != 0:
        return "report failed: " + (r.stderr.strip().splitlines() or ["no output"])[0][:160]
    try:
        return json.loads(r.stdout)["totals"]
    except (ValueError, KeyError):
        return "report JSON without totals"

def heaptrack_count(out):
    for line in out.splitlines():  # heaptrack_interpret's summary: "allocations:   N"
        if line.strip().startswith("allocations:"):
            return int(line.split()[-1])
    return None

MODES = ("untraced", "heapline", "heaptrack")

def analyses(hl_trace, ht_file):
    """Each analysis of the Heapline trace, and heaptrack_print of heaptrack's, the best of
    `runs` rounds, the commands taking turns within each: [(name, wall s, CPU s, peak RSS
    bytes)]. Output goes to a file, as a user would keep it."""
    out = f"{work}/analysis.out"
    # (label, argv, the heaptrack command it is measured against): a comparison of two traces
    # against heaptrack_print's own comparison, the report of every stack against its print of
    # every backtrace, everything else against its report.
    ht, ht_diff = "heaptrack_print", "heaptrack_print --diff (the file with itself)"
    ht_all = "heaptrack_print -n 1000000 -s 1000000 (every backtrace)"
    commands = [
        ("heapline report", [heapline, "report", hl_trace], ht),
        ("heapline report --format json --top 1000000",
         [heapline, "report", hl_trace, "--format", "json", "--top", "1000000"], ht_all),
        ("heapline timeline", [heapline, "timeline", hl_trace, "-o", out], ht),
        ("heapline leaks", [heapline, "leaks", hl_trace], ht),
        ("heapline objects", [heapline, "objects", hl_trace, "-o", out], ht),
        ("heapline diff (the trace with itself)",
         [heapline, "diff", hl_trace, hl_trace, "-o", out], ht_diff),
        ("heapline export --format speedscope",
         [heapline, "export", hl_trace, "--format", "speedscope", "-o", out], ht),
    ]
    if ht_file:
        commands.append((ht, [heaptrack_print, ht_file], ht))
        commands.append((ht_diff, [heaptrack_print, "--diff", ht_file, ht_file], ht_diff))
        commands.append(
            (ht_all, [heaptrack_print, "-n", "1000000", "-s", "1000000", ht_file], ht_all))
    best = {}
    for _ in range(runs):
        for label, argv, _ in commands:
            try:
                wall, cpu, _, peak, _ = measure(argv, stdout=f"{work}/analysis.stdout")
            except SystemExit as failure:  # leaks exits 1 when it finds leaks: still measured
                if label != "heapline leaks":
                    raise
                print(f"  {label}: {failure}", file=sys.stderr)
                continue
            old = best.get(label, (wall, cpu, peak))
            best[label] = (min(old[0], wall), min(old[1], cpu), min(old[2], peak))
            # The kernel writes a gigabyte of output back meanwhile, on the CPU the next
            # command needs: it finishes before that command starts.
            for path in (out, f"{work}/analysis.stdout"):
                if os.path.exists(path):
                    os.remove(path)
            os.sync()
    return [(label, *best[label], yardstick) for label, _, yardstick in commands if label in best]

def mib(n):
    return f"{n / 1048576:.1f} MiB" if n >= 1048576 else f"{n / 1024:.0f} KiB"

def trace_size(n):
    """A trace's size, to the byte below 100 KiB: the churns' traces are a few kilobytes."""
    return f"{n:,} B" if n < 100 * 1024 else mib(n)

def table(head, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for row in [head] + rows:
        print("  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w)
                        for i, (x, w) in enumerate(zip(row, widths))))

# A build running beside the benchmark inflates every cell, and the ratios by different amounts.
load = os.getloadavg()[0]
if load > 0.5 * (os.cpu_count() or 1):
    print(f"warning: load average {load:.1f} on {os.cpu_count()} CPUs: other work will skew "
          "the numbers; rerun on a quiet machine", file=sys.stderr)
started = time.perf_counter()
disturbed = 0
print(f"{pairs} pairs per churn, {rows} rows for python; best of {runs} runs; "
      f"{os.cpu_count()} CPUs. CPU is user+sys of the whole process tree; peak RSS the largest "
      "of any process in it; * marks a cell with no run undisturbed by other work.")
for name, argv in WORKLOADS:
    cells, clean = {m: [] for m in MODES}, {m: [] for m in MODES}
    # A run during which other processes took CPU is repeated, up to twice the runs: on this
    # size of machine one compile beside us doubles heaptrack's wall time.
    for r in range(2 * runs):
        if all(len(clean[m]) >= runs for m in MODES):
            break
        for mode in MODES:  # interleaved, so that drift of the machine hits every mode alike
            (wall, cpu, foreign, peak, out), trace = run_mode(mode, argv, name)
            size = os.path.getsize(trace) if trace else 0
            cells[mode].append((wall, cpu, size, trace, out, peak))
            quiet = foreign < 0.05 + 0.05 * wall  # /proc/stat counts in 10 ms ticks
            if quiet:
                clean[mode].append(cells[mode][-1])
            disturbed += not quiet
            print(f"  {name} run {r + 1} {mode:9} {wall:6.2f} s wall {cpu:6.2f} s CPU"
                  f"{'' if quiet else f'  (disturbed: {foreign:.2f} s foreign CPU)'}",
                  file=sys.stderr)
    # Best of the runs, not the median: other work on the machine only ever adds time.
    best = {}
    for m, cs in cells.items():
        pool = clean[m] or cs
        best[m] = (min(c[0] for c in pool), min(c[1] for c in pool), min(c[5] for c in pool),
                   cs[-1][2], not clean[m])
    uw, uc, ur = best["untraced"][:3]
    print(f"\n{name}: {' '.join(os.path.basename(a) for a in argv)}")
    table(("", "CPU s", "x", "wall s", "x", "peak RSS", "x", "trace"),
          [(m, f"{c:.2f}{'*' if noisy else ''}", f"{c / uc:.2f}", f"{w:.2f}", f"{w / uw:.2f}",
            mib(rss), f"{rss / ur:.2f}", trace_size(size) if m != "untraced" else "-")
           for m, (w, c, rss, size, noisy) in best.items()])
    hc, tc = best["heapline"][1], best["heaptrack"][1]
    hs, ts = best["heapline"][3], best["heaptrack"][3]
    print(f"Heapline CPU / heaptrack CPU: {hc / tc:.2f}; trace / heaptrack's: {hs / ts:.2f}")

    hl_trace, ht_out = cells["heapline"][-1][3], cells["heaptrack"][-1][4]
    totals = report_totals(hl_trace)
    if isinstance(totals, str):
        counted, verdict = totals, "MISMATCH"
    else:
        counted = (f"{totals['allocations']} allocations, {totals['frees']} frees, "
                   f"{totals['peak_live_blocks']} blocks live at the peak")
        allocs = totals["allocations"]
        verdict = ("OK" if name not in CHURNS or (pairs <= allocs <= pairs + 1000
                                                  and totals["frees"] >= pairs) else "MISMATCH")
    print(f"counts: heapline {counted} | heaptrack {heaptrack_count(ht_out)} allocations"
          + (f" | expected >= {pairs} allocations: {verdict}" if name in CHURNS else ""))

    measured = analyses(hl_trace, cells["heaptrack"][-1][3])
    yardsticks = {m[0]: m for m in measured}
    print(f"analyses (best of {runs}); each against the heaptrack command that does the same"
          " (heaptrack_print; a diff its --diff, every stack its print of every backtrace),"
          " and against plain heaptrack_print:")
    plain = yardsticks.get("heaptrack_print")
    table(("", "wall s", "CPU s", "peak RSS", "wall / heaptrack's", "RSS / heaptrack's",
           "wall / heaptrack_print"),
          [(label, f"{w:.2f}", f"{c:.2f}", mib(rss),
            f"{w / yardsticks[y][1]:.2f}" if y in yardsticks else "-",
            f"{rss / yardsticks[y][3]:.2f}" if y in yardsticks else "-",
            f"{w / plain[1]:.2f}" if plain else "-")
           for label, w, c, rss, y in measured])

if disturbed:
    print(f"\n{disturbed} runs overlapped other work and were repeated")
print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")
