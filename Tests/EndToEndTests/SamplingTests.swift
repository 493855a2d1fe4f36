import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// `heapline record --sample-bytes`: exact totals from the counters, unbiased estimates per
/// stack and per category, and no leak scan.
@Suite struct SamplingTests {
  /// The fixture's three stacks: blocks of one size each, made `count` times.
  struct Stack {
    var function: String
    var size: UInt64
    var count: UInt64
    var bytes: UInt64 { size * count }
  }

  // About 3,000 samples a stack at 64 KiB: an estimate's relative error is then under 2 %
  // (one standard deviation), so 10 % is more than 5 of them away.
  static let stacks = [
    Stack(function: "small_blocks", size: 64, count: 3_000_000),
    Stack(function: "medium_blocks", size: 4000, count: 50_000),
    Stack(function: "large_blocks", size: 200 * 1024, count: 1_000),
  ]
  static let kept: UInt64 = 16  // blocks each stack leaves live

  func record(_ arguments: [String] = [], in dir: URL) throws -> (URL, Harness.Result) {
    let program = try Harness.fixture("sampled", in: dir)
    let trace = dir.appendingPathComponent("sampled.trace")
    let counts = Self.stacks.map { String($0.count) }
    let result = try Harness.heapline(
      ["record", "-o", trace.path, "--sample-bytes", "65536"] + arguments + ["--", program]
        + counts)
    return (trace, result)
  }

  @Test func totalsAreExactAndEachStacksBytesAreEstimatedWithinTenPercent() throws {
    // Given a program that allocates 600 MB from three functions, a third each
    let dir = try Harness.temporaryDirectory()
    let (trace, result) = try record(in: dir)
    #expect(result.status == 0)
    let usable = try #require(
      UInt64(result.stdout.replacingOccurrences(of: "live usable ", with: "").trimmed))
    // Then the totals are the program's, exactly, from the counters
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    let allocations = Self.stacks.reduce(0) { $0 + $1.count }
    #expect(stats.sampleWeight?.meanBytes == 65536)
    #expect(stats.totals.allocationCount == allocations)
    #expect(stats.totals.freeCount == allocations - 3 * Self.kept)
    #expect(stats.totals.allocatedBytes == Self.stacks.reduce(0) { $0 + $1.bytes })
    #expect(stats.totals.liveBlocks == 3 * Self.kept)
    #expect(stats.totals.liveBytes == usable)
    // And each stack's allocated bytes, scaled up from its samples, is within 10 % of the truth
    let report = try Harness.heapline(
      ["report", trace.path, "--format", "json", "--sort", "allocated", "--top", "10"])
    #expect(report.status == 0)
    let json = try #require(
      JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])
    let sampling = try #require(json["sampling"] as? [String: Any])
    #expect(sampling["mean_bytes"] as? Int == 65536)
    let top = try #require(json["top_stacks"] as? [[String: Any]])
    var estimates: [String: Int] = [:]
    for stack in Self.stacks {
      let entry = try #require(
        top.first { entry in
          (entry["frames"] as? [[String: Any]] ?? []).contains {
            $0["function"] as? String == stack.function
          }
        }, "no stack for \(stack.function)")
      let estimate = Double(try #require(entry["total_bytes"] as? Int))
      let error = abs(estimate - Double(stack.bytes)) / Double(stack.bytes)
      #expect(error < 0.10, "\(stack.function): \(estimate) for \(stack.bytes)")
      estimates[stack.function] = Int(estimate)
    }
    // And its pprof export holds the same estimates, with the sampling period, and says so
    guard GoPprof.go != nil else { return }
    let profile = try PprofExportTests.export([trace.path], name: "sampled")
    #expect(try GoPprof.run(["-raw"], profile: profile).contains("Period: 65536"))
    let comments = try GoPprof.run(["-comments"], profile: profile)
    #expect(comments.contains("sampled every 65,536 bytes on average: its figures are estimates"))
    let samples = try GoPprof.traces(profile, type: "alloc_space")
    for (function, estimate) in estimates {
      let exported = samples.filter { $0.frames.contains(function) }.reduce(0) { $0 + $1.value }
      #expect(exported == estimate, "\(function) in pprof")
    }
  }

  @Test func everyMemberOfTheMallocFamilyIsCountedExactlyWhenSampled() throws {
    // Given the fixture that calls each member of the family once or more (RecordTests has its
    // figures), sampled every 64 bytes, so that most calls are sampled and some are not
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("family", in: dir)
    let trace = dir.appendingPathComponent("family.trace")
    let result = try Harness.heapline(
      ["record", "-o", trace.path, "--sample-bytes", "64", "--", program])
    #expect(result.status == 0)
    // Then the counts are the full trace's: 12 allocations of 9,228 bytes, 5 frees, 7 live
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    #expect(stats.totals.allocationCount == 12)
    #expect(stats.totals.freeCount == 5)
    #expect(stats.totals.allocatedBytes == 9_228)
    #expect(stats.totals.liveBlocks == 7)
  }

  @Test(arguments: ["threads", "briefthreads"])
  func threadsCountsReachTheTraceAsAFullRecordingCountsThem(fixture: String) throws {
    // Given threads that allocate, free each other's blocks and exit (threads), or make ten
    // calls each and exit (briefthreads), recorded in full and sampled every MiB
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture(fixture, in: dir)
    var totals: [AllocationTotals] = []
    for sampling in [[], ["--sample-bytes", "1048576"]] {
      let trace = dir.appendingPathComponent("\(fixture)\(sampling.count).trace")
      let result = try Harness.heapline(
        ["record", "--no-symbols", "-o", trace.path] + sampling + ["--", program])
      #expect(result.status == 0)
      totals.append(try Statistics(reader: TraceReader(path: trace.path)).totals)
    }
    // Then the sampled counts are the full trace's, every thread's included
    #expect(totals[1].allocationCount == totals[0].allocationCount)
    #expect(totals[1].freeCount == totals[0].freeCount)
    #expect(totals[1].allocatedBytes == totals[0].allocatedBytes)
    #expect(totals[1].liveBlocks == totals[0].liveBlocks)
  }

  @Test func aPeakWhileEveryThreadWaitsIsWithin64KiBAThreadOfTheTruth() throws {
    // Given 8 threads that each allocate 64 blocks of 50,000 B, too few calls and bytes for a
    // sample every 10 MB, and then all wait 50 ms at a barrier before they free them
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("barrierpeak", in: dir)
    let trace = dir.appendingPathComponent("barrierpeak.trace").path
    let result = try Harness.heapline(
      ["record", "--no-symbols", "--sample-bytes", "10000000", "-o", trace, "--", program]
        + ["8", "64", "50000", "50"])
    #expect(result.status == 0, "\(result.stderr)")
    let truth = try #require(
      Int64(result.stdout.replacingOccurrences(of: "peak usable ", with: "").trimmed))
    // Then the peak holds every thread's blocks, within the 64 KiB that each of the 9 threads
    // may not have written yet (it was 3 MB: no thread had written its counts)
    let peak = Int64(try Statistics(reader: TraceReader(path: trace)).totals.peakLiveBytes)
    #expect(abs(peak - truth) < 9 * 65536, "peak \(peak) B, truth \(truth) B")
  }

  @Test func theReportSaysWhichFiguresAreEstimates() throws {
    let dir = try Harness.temporaryDirectory()
    let (trace, _) = try record(in: dir)
    let report = try Harness.heapline(["report", trace.path, "--no-symbolize"])
    #expect(report.status == 0)
    #expect(
      report.stdout.contains(
        "Sampled, one allocation every 65,536 bytes on average: totals are exact (live bytes are"
          + " usable bytes; the peak is the largest that the per-thread counts show, each within"
          + " 64 KiB of its thread's); categories and stacks are estimates"))
    #expect(report.stdout.contains("Usable bytes freed"))
    // The analyses that need every block say so, in one line, and fail
    for command in ["timeline", "objects", "view"] {
      let refused = try Harness.heapline([
        command, trace.path, "-o", dir.appendingPathComponent(command).path,
      ])
      #expect(refused.status == 2)
      #expect(refused.stderr.contains("\(command) needs every block"))
    }
  }

  @Test func diffAndSeveralRunsSayWhichRunsFiguresAreEstimates() throws {
    let dir = try Harness.temporaryDirectory()
    let (sampled, _) = try record(in: dir)
    let full = try RunsReportTests.record(["100", "48", "0", "0"], name: "full", in: dir)
    let note =
      "A was sampled every 65,536 bytes on average (--sample-bytes): its figures are estimates"
    let text = try Harness.heapline(["diff", sampled.path, full, "--no-symbolize"])
    #expect(text.status == 0, "\(text.stderr)")
    #expect(text.stdout.split(separator: "\n").dropFirst().first.map(String.init) == "  " + note)
    #expect(!text.stdout.contains("B was sampled"))
    let csv = try Harness.heapline([
      "diff", sampled.path, full, "--format", "csv", "--no-symbolize",
    ])
    #expect(csv.status == 0)
    #expect(csv.stderr == "heapline: diff: \(note)\n")
    let runs = try Harness.heapline(["report", full, sampled.path, "--no-symbolize"])
    #expect(runs.status == 0)
    let lines = runs.stdout.split(separator: "\n").map(String.init)
    #expect(lines.filter { $0.contains("sampled every") }.count == 1)
    #expect(
      lines.contains {
        $0.hasPrefix("  Run 2: '\(sampled.path)'")
          && $0.hasSuffix(
            "; sampled every 65,536 bytes on average: its totals are exact, its live bytes usable"
              + " bytes, and its stacks' and categories' figures estimates")
      })
    // And the totals are each run's exact ones, summed, not the sampled run's estimates (the
    // blocks of 48 B sampled are each counted as about 65,536 B's worth), alone or merged
    let exact = try [full, sampled.path].map { try PhasesFixture.reportTotals($0) }
    func sum(_ key: String) -> String {
      ByteCountText.grouped(UInt64(exact.map { $0[key]! }.reduce(0, +)))
    }
    #expect(lines.contains("  Allocations      \(sum("allocations"))"), "\(runs.stdout)")
    #expect(lines.contains("  Bytes allocated  \(sum("allocated_bytes")) B"))
    #expect(lines.contains("  Blocks live      \(sum("live_blocks"))"))
    #expect(
      lines.contains(
        "  Bytes live       \(sum("live_bytes")) B  (a sampled run's are usable bytes)"))
    let merged = dir.appendingPathComponent("sampled.merged").path
    #expect(try Harness.heapline(["merge", sampled.path, "-o", merged]).status == 0)
    let alone = try Harness.heapline(["report", merged, "--no-symbolize"])
    let one = exact[1]
    #expect(
      alone.stdout.contains(
        "  Allocations      \(ByteCountText.grouped(UInt64(one["allocations"]!)))\n"),
      "\(alone.stdout)")
    #expect(
      alone.stdout.contains(
        "  Blocks live      \(ByteCountText.grouped(UInt64(one["live_blocks"]!)))\n"))
  }

  @Test func sampledSwiftObjectsFreedAtOnceKeepTheirClass() throws {
    // Given 100,000 objects of each of two classes, each freed by its thread's next call
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.swiftFixture("sampledclasses", ["-O"], in: dir)
    let trace = dir.appendingPathComponent("classes.trace").path
    let result = try Harness.heapline([
      "record", "--sample-bytes", "4096", "-o", trace, "--", program,
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "made 200000\n")
    // Then the sampled ones are counted under their classes, about 100,000 each estimated
    // (about 590 and 3,500 samples), none left to the size classes (24 and 144 bytes)
    let stats = try Statistics(reader: TraceReader(path: trace))
    for name in ["sampledclasses.Small", "sampledclasses.Large"] {
      let count = stats.category(named: name)?.totalCount ?? 0
      #expect(count > 80_000 && count < 120_000, "\(name): \(count)")
    }
    for name in ["Malloc 32 Bytes", "Malloc 144 Bytes"] {
      #expect((stats.category(named: name)?.totalCount ?? 0) < 10_000, "\(name)")
    }
  }

  @Test func aLeakScanIsRefusedWhenAskedForAndLeaksSaysTheTraceHasNone() throws {
    let dir = try Harness.temporaryDirectory()
    // Asked for both: a one-line usage error, and the program does not run
    let (_, refused) = try record(["--leaks"], in: dir)
    #expect(refused.status == 64)
    #expect(refused.stderr.contains("--sample-bytes cannot be combined with a leak scan"))
    let (_, everyRefused) = try record(["--leaks-every", "1"], in: dir)
    #expect(everyRefused.status == 64)
    // Not asked: sampling turns the scan at exit off, and `leaks` says why there is none
    let (trace, result) = try record(in: dir)
    #expect(result.status == 0)
    let leaks = try Harness.heapline(["leaks", trace.path])
    #expect(leaks.status == 2)
    #expect(
      leaks.stderr.contains(
        "has no leak scan: it was recorded with --sample-bytes 65536, which keeps only the"
          + " sampled blocks"))
  }
}

extension String {
  fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
