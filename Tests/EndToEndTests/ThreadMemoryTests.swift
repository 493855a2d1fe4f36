import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// What the shim costs a program of many threads that all live at once, as a server's pool
/// does: every thread has a buffer of its own, and what a buffer holds beyond its records must
/// stay small, whatever the number of threads.
@Suite struct ThreadMemoryTests {
  struct Run {
    var untracedKB, tracedKB: Int
    var trace: String
    var directory: URL
  }

  /// Records `threadpool` with `threads` threads of `pairs` allocations each, and runs it
  /// untraced too, each printing its peak RSS (VmHWM, kB).
  static func run(threads: Int, pairs: Int) throws -> Run {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("threadpool", in: dir)
    let arguments = [String(threads), String(pairs)]
    let untraced = try Harness.run(program, arguments)
    let trace = dir.appendingPathComponent("pool.trace").path
    let recorded = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", program] + arguments)
    #expect(untraced.status == 0)
    #expect(recorded.status == 0, "\(recorded.stderr)")
    let peak: (String) -> Int? = { stdout in
      stdout.split(separator: "\n").last { $0.hasPrefix("peak ") }.flatMap { Int($0.dropFirst(5)) }
    }
    return Run(
      untracedKB: try #require(peak(untraced.stdout)),
      tracedKB: try #require(peak(recorded.stdout)),
      trace: trace, directory: dir)
  }

  @Test func aThousandThreadsThatEachAllocateALittleCostUnder80KiBEach() throws {
    // Given 1,000 threads alive at once, each making 20 allocations: each thread's buffer took
    // 64 KiB for a cache it zeroed (zero already) and its unwinder 96 KiB for rules that every
    // thread derived again (144 MB against 16 MB untraced)
    let run = try Self.run(threads: 1000, pairs: 20)
    defer { try? FileManager.default.removeItem(at: run.directory) }
    #expect(run.tracedKB <= run.untracedKB + 1000 * 80, "\(run)")
    // And every block that pool_work made is in the trace, freed
    let stats = try Statistics(
      reader: try TraceReader(path: run.trace), options: StatisticsOptions(topStackCount: 10_000))
    let report = StatisticsReport(statistics: stats, symbolizer: Symbolizer())
    let made = stats.topStacks.filter { stack in
      report.frames(of: stack).contains { $0.function == "pool_work" }
    }
    #expect(made.reduce(0) { $0 + $1.allocationCount } == 1000 * 20)
    #expect(made.reduce(0) { $0 + $1.liveBlocks } == 0)
  }

  @Test func threeHundredBusyThreadsShareTheirBuffersMemoryInsteadOfFillingTwoMiBEach() throws {
    // Given 300 threads alive at once, each making 40,000 allocations: each thread's buffer
    // filled up to 2 MiB before it was written out (119 MB against 23 MB untraced)
    let run = try Self.run(threads: 300, pairs: 40_000)
    defer { try? FileManager.default.removeItem(at: run.directory) }
    #expect(run.tracedKB <= run.untracedKB + 48 * 1024 + 300 * 80, "\(run)")
    // And the trace holds every allocation: pool_work's 12,000,000, and besides them no more
    // than a block per thread (glibc's for its thread-local storage) and a few of main's. (The
    // trailer's counts: the debug build would take most of a minute to replay 24 M events.)
    let trailer = try #require(try TraceReader(path: run.trace).trailer)
    #expect(trailer.lostEvents == 0)
    #expect((12_000_000...12_000_000 + 300 + 16).contains(trailer.allocCount), "\(trailer)")
    #expect((12_000_000...12_000_000 + 300 + 16).contains(trailer.freeCount), "\(trailer)")
  }

  @Test func sampledTotalsStayExactWhenThreadsOutnumberTheirOwnBuffers() throws {
    // Given 1,100 threads alive at once, 76 of them past the shim's 1,024 buffers of their
    // own, sharing a few: recorded sampled, each thread that shared a buffer lost what it
    // counted since its last COUNTS record as it exited (33,127 allocations of 34,104), and one
    // that exited with its sampled allocation still waiting left the next thread reading its
    // dead TLS (SIGSEGV in 3 runs of 8 of a tester's)
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("threadpool", in: dir)
    var totals: [AllocationTotals] = []
    for options in [[], ["--sample-bytes", "4096"]] {
      let trace = dir.appendingPathComponent("pool\(totals.count).trace").path
      let result = try Harness.heapline(
        ["record", "--no-leaks"] + options + ["-o", trace, "--", program, "1100", "30"])
      #expect(result.status == 0, "\(options): \(result.stderr)")
      totals.append(try Statistics(reader: try TraceReader(path: trace)).totals)
    }
    // Then the sampled totals are the full recording's, every one of pool_work's 33,000 in
    #expect(totals[0].allocationCount >= 33_000)
    #expect(totals[1].allocationCount == totals[0].allocationCount)
    #expect(totals[1].freeCount == totals[0].freeCount)
    #expect(totals[1].allocatedBytes == totals[0].allocatedBytes)
  }

  @Test func sampledTotalsCountWhatThreadsFreeAfterTheirExitDestructors() throws {
    // Given 3,000 detached threads, 16 at a time, each allocating and freeing 2,007 B: an
    // exiting thread frees other threads' thread-local blocks after its own destructors have
    // run, and recorded sampled, those frees stayed in its counts, which went with it (3,000
    // frees of 4,995, where the full recording had 4,990 of 4,995)
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("detached", in: dir)
    var live: [Int64] = []
    for options in [[], ["--sample-bytes", "1000"]] {
      let trace = dir.appendingPathComponent("detached\(live.count).trace").path
      let result = try Harness.heapline(
        ["record", "--no-leaks"] + options + ["-o", trace, "--", program, "3000"])
      #expect(result.status == 0, "\(options): \(result.stderr)")
      let totals = try Statistics(reader: try TraceReader(path: trace)).totals
      #expect(totals.freeCount > 3000, "\(options)")
      live.append(Int64(totals.allocationCount) - Int64(totals.freeCount))
    }
    // Then the blocks live at the end are the same few, give or take the thread-local blocks
    // that glibc frees or keeps with the stacks it caches, which differ from run to run (5 or
    // 6 in full recordings; 1,233 sampled before)
    #expect(abs(live[1] - live[0]) <= 16, "\(live)")
  }
}
