import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// Peaks that come and go between the figures a trace samples: the process's RSS, which the
/// shim reads every 100 ms, and a sampled recording's live bytes, which its COUNTS records carry.
@Suite struct PeakTests {
  /// Records `spike` touching `bytes` for 20 ms and exiting `afterMS` later, with `options`.
  static func record(bytes: Int, afterMS: Int, options: [String] = []) throws -> (
    stats: Statistics, report: StatisticsReport, programPeakKB: Int
  ) {
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("spike", in: dir)
    let trace = dir.appendingPathComponent("spike.trace").path
    let result = try Harness.heapline(
      ["record"] + options + ["-o", trace, "--", program, String(bytes), String(afterMS)])
    #expect(result.status == 0, "\(result.stderr)")
    let line = result.stdout.split(separator: "\n").last { $0.hasPrefix("peak ") }
    let peakKB = try #require(line.flatMap { Int($0.dropFirst(5)) })
    let stats = try Statistics(
      reader: try TraceReader(path: trace), options: StatisticsOptions(topStackCount: 100))
    return (stats, StatisticsReport(statistics: stats, symbolizer: Symbolizer()), peakKB)
  }

  @Test(arguments: [250, 0])
  func peakRSSIsTheKernelsHighWaterMarkThoughNoSampleSawIt(afterMS: Int) throws {
    // Given a program that touches 50 MB for 20 ms, between two samples 100 ms apart, and then
    // exits 250 ms later or at once: the peak RSS was the largest sample, 3 MB
    let run = try Self.record(bytes: 50_000_000, afterMS: afterMS, options: ["--no-leaks"])
    let peak = try #require(run.stats.totals.peakRSSBytes)
    // Then it is the high-water mark the program itself read as its last act, or the little
    // more that the shim's end added after it
    let programPeak = UInt64(run.programPeakKB) * 1024
    #expect(programPeak >= 50_000_000)
    #expect(peak >= programPeak && peak <= programPeak + 4 << 20, "\(peak) B, \(programPeak) B")
  }

  @Test func aSampledBlockThatMakesThePeakIsInItsStacksBytesAtThePeak() throws {
    // Given a sampled recording (a sample every 10 KB on average) of a program whose peak is
    // one block of 5,000,000 B, sampled for certain: its stack had 0 B at the peak, because
    // the counts that made the peak came before its ALLOC
    let run = try Self.record(
      bytes: 5_000_000, afterMS: 0, options: ["--sample-bytes", "10000", "--no-leaks"])
    let spike = run.stats.topStacks.filter { stack in
      run.report.frames(of: stack).contains { $0.function == "main" }
        && stack.totalBytes == 5_000_000
    }
    #expect(spike.count == 1)
    #expect(spike.first?.bytesAtPeak == 5_000_000)
    // And the totals' peak holds it
    #expect(run.stats.totals.peakLiveBytes >= 5_000_000)
  }

  @Test func aPeakJustBeforeARotationBelongsToTheFileItCameIn() throws {
    // Given a program that touches 50 MB for 20 ms from 0.6 s, recorded in files of a second
    // with samples 500 ms apart: the first file had no sample after the spike, and the second
    // file's first sample found the mark risen and took the peak for its own
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("spike", in: dir)
    let base = dir.appendingPathComponent("spike.trace").path
    let result = try Harness.heapline(
      [
        "record", "--rotate", "1", "--no-leaks", "-o", base, "--", program, "50000000", "700",
        "600",
      ],
      environment: ["HEAPLINE_SAMPLE_MS": "500"])
    #expect(result.status == 0, "\(result.stderr)")
    let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
      .filter { $0.hasPrefix("spike.0") }.sorted().map { dir.appendingPathComponent($0).path }
    try #require(files.count == 2, "\(files)")
    let peaks = try files.map {
      try Statistics(reader: try TraceReader(path: $0)).totals.peakRSSBytes
    }
    // Then the first file's peak RSS holds the 50 MB, and the second's does not
    #expect((peaks[0] ?? 0) >= 50_000_000, "\(peaks)")
    #expect((peaks[1] ?? .max) < 50_000_000, "\(peaks)")
  }
}
