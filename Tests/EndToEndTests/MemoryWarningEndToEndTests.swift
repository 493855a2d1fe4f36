import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// Backing stores, memory warnings and the memory budget, on the `memory` fixture: a C program
/// that reports stores and registers an observer through the preloaded shim.
@Suite struct MemoryWarningEndToEndTests {
  static let mib: UInt64 = 1 << 20

  func record(_ arguments: [String], mode: [String], environment: [String: String] = [:])
    throws -> (result: Harness.Result, trace: URL)
  {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("memory", in: dir)
    let trace = dir.appendingPathComponent("memory.trace")
    let result = try Harness.heapline(
      ["record", "-o", trace.path] + arguments + ["--", program] + mode,
      environment: environment)
    return (result, trace)
  }

  @Test func backingStoresAreExactPerCategoryInTheReport() throws {
    // Given five 1 MiB "Frames" stores, two released, and a 64 KiB "Tiles" store reported twice
    let (result, trace) = try record([], mode: ["backing"])
    #expect(result.status == 0, "\(result.stderr)")
    // Then the report's figures are exact
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    let frames = try #require(stats.backingStores.category(named: "Frames"))
    #expect(frames.persistentBytes == 3 * Self.mib)
    #expect(frames.persistentCount == 3)
    #expect(frames.transientCount == 2)
    #expect(frames.peakBytes == 5 * Self.mib)
    let tiles = try #require(stats.backingStores.category(named: "Tiles"))
    #expect(tiles.persistentBytes == 65_536)
    #expect(tiles.totalCount == 2)
    // And the footprint reconciles RSS with them: they were touched, so they are resident
    let footprint = stats.footprint
    #expect(footprint.isMeasured)
    #expect(footprint.backingStoreBytes == 3 * Self.mib + 65_536)
    #expect((footprint.residentBytes ?? 0) > footprint.backingStoreBytes)
    let text = try Harness.heapline(["report", trace.path, "--top", "0"]).stdout
    #expect(text.contains("Backing stores (memory outside malloc, reported by the program)"))
    #expect(text.contains("  Backing stores   3,211,264 B"))
  }

  @Test func warningsAtGivenTimesReachTheObserverAndTheTimeline() throws {
    // Given a program whose observer frees 1,000,000 bytes, warned at 0.1 s and 0.2 s
    let (result, trace) = try record(["--warn-at", "0.1,0.2:critical"], mode: ["warn", "2"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("observer: level 1\nobserver: level 3\nwarned 2 times"))
    // Then the trace has both, in order, each with the observer's answer
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    #expect(stats.memoryWarnings.map(\.warning.level) == [.warning, .critical])
    #expect(stats.memoryWarnings.allSatisfy { $0.warning.source == .timer })
    #expect(stats.memoryWarnings.map(\.freedBytes) == [1_000_000, 1_000_000])
    #expect(stats.memoryWarnings[0].time >= 100_000_000)
    // And each is a marker in the timeline
    let timeline = try Harness.heapline(["timeline", trace.path, "--interval", "50"])
    let table = try CSVTable(timeline.stdout)
    let markers = table.rows.map { $0[try! table.column("marker")] }.filter { !$0.isEmpty }
    #expect(markers == ["memory warning: warning", "memory warning: critical"])
  }

  @Test func aSignalRaisesAWarningAndSigqueueCarriesItsLevel() throws {
    let (result, trace) = try record(["--warn-signal", String(SIGUSR1)], mode: ["signal"])
    #expect(result.status == 0, "\(result.stderr)")
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    #expect(stats.memoryWarnings.map(\.warning.level) == [.warning, .critical])
    #expect(stats.memoryWarnings.allSatisfy { $0.warning.source == .signal })
    #expect(stats.memoryWarnings.map(\.freedBytes) == [1_000_000, 1_000_000])
  }

  @Test func crossingTheBudgetKillsTheProgramAfterALowMemoryReport() throws {
    // Given a program that grows a "Hoard" by 1 MiB every 5 ms, with "Frames" stores beside it,
    // and frees an 8 MiB cache when warned, recorded with a 96 MiB budget (sampled every 10 ms)
    let (result, trace) = try record(
      ["--memory-limit", "96M"], mode: ["budget"], environment: ["HEAPLINE_SAMPLE_MS": "10"])
    // Then it is killed as a low-memory kill kills, and heapline says where the report is
    #expect(result.status == 128 + 9)
    let reportPath = trace.path + ".lowmem.txt"
    #expect(result.stderr.contains("exceeded its memory limit of 100,663,296 bytes"))
    #expect(result.stderr.contains("low-memory report written to \(reportPath)"))
    // And the report gives the limit and the footprint, and names the biggest category first
    let report = try String(contentsOfFile: reportPath, encoding: .utf8)
    let lines = report.split(separator: "\n").map(String.init)
    #expect(report.contains("of a 100,663,296 B (96.00 MiB) limit; the process was killed"))
    let largest = try #require(lines.firstIndex(of: "Largest categories, live at the kill"))
    #expect(lines[largest + 2].hasPrefix("  Hoard "))
    #expect(report.contains("Frames"))
    #expect(report.contains("Largest stacks, live at the kill"))
    #expect(report.contains("budget"))  // the fixture's function, symbolized
    // And the warnings that came before, with what the observer freed
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    let levels = stats.memoryWarnings.map(\.warning.level)
    #expect(levels.first == .warning)
    #expect(Set(levels).isSuperset(of: [.warning, .urgent, .critical]))
    #expect(stats.memoryWarnings.allSatisfy { $0.warning.limitBytes == 96 * Self.mib })
    #expect(stats.memoryWarnings[0].freedBytes == 8 * Self.mib)
    #expect(report.contains("cache 8,388,608"))
    #expect(stats.trace.endReason == .memoryLimit)
    #expect(try #require(stats.memoryLimitKill).limit.footprintBytes >= 96 * Self.mib)
  }

  @Test func askingForPSIDegradesCleanly() throws {
    // PSI where the kernel has it; where it does not, one line on stderr and the run goes on
    let (result, trace) = try record(["--psi"], mode: ["backing"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      !result.stderr.contains("PSI")
        || result.stderr.contains("memory pressure (PSI) is not watched"))
    #expect(try TraceReader(path: trace.path).isComplete)
  }

  @Test func badMemoryOptionsAreRefused() throws {
    for arguments in [
      ["--memory-limit", "lots"], ["--warn-at", "soon"], ["--warn-at", "1:panic"],
      ["--warn-signal", "99"],
    ] {
      let result = try Harness.heapline(["record"] + arguments + ["--", "/bin/true"])
      #expect(result.status != 0)
      #expect(result.stderr.contains(arguments[0]), "\(arguments): \(result.stderr)")
    }
  }
}
