import Foundation
import HeaplineTrace
import Testing

/// Analyses run in memory that follows the live blocks and the stacks, never the number of
/// events, and show a progress line only on a terminal.
@Suite("Analysis at scale: bounded memory, progress on a terminal")
struct AnalysisScaleTests {
  /// Runs `heapline arguments` under python3 and returns the child's peak RSS in KiB
  /// (`ru_maxrss` of the waited-for child, the VmHWM it had when it exited) and its stdout.
  /// The deadline guards against a hang, not a slow run: a debug build reads 100 M events in
  /// about two minutes on a quiet machine, and took over four beside other work.
  static func peakResidentKiB(_ arguments: [String], status: Int = 0) throws -> (
    kib: Int, stdout: String
  ) {
    let script = """
      import resource, subprocess, sys
      r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=1100)
      sys.stdout.write(r.stdout.decode())
      sys.stderr.write(r.stderr.decode())
      sys.stderr.write(f"\\n{r.returncode} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
      """
    let result = try Harness.run(
      "/usr/bin/env", ["python3", "-c", script, Harness.heapline] + arguments, timeout: 1200)
    let fields = result.stderr.split(separator: "\n").last?.split(separator: " ") ?? []
    guard result.status == 0, fields.count == 2, fields[0] == "\(status)", let kib = Int(fields[1])
    else {
      throw HarnessError("heapline \(arguments) under python3 failed: \(result.stderr)")
    }
    return (kib, result.stdout)
  }

  static func totals(_ json: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
    guard let totals = object?["totals"] as? [String: Any] else {
      throw HarnessError("no totals in the report: \(json.prefix(200))")
    }
    return totals
  }

  /// Checks a JSON report's totals against those of a synthetic churn of `allocations`: all
  /// freed but the 64 blocks of 48 bytes live at the end, which were also the peak.
  static func expectChurnTotals(_ json: String, allocations: Int) throws {
    let totals = try Self.totals(json)
    #expect(totals["allocations"] as? Int == allocations)
    #expect(totals["frees"] as? Int == allocations - SyntheticChurnTrace.liveBlocks)
    #expect(totals["peak_live_bytes"] as? Int == 64 * 48)
    #expect(totals["live_bytes"] as? Int == 64 * 48)
  }

  @Test("report's peak RSS is the same for 1 M and 4 M allocations, and its counts are exact")
  func reportMemoryDoesNotGrowWithTheEventCount() throws {
    // Given two traces of the same churn, 64 blocks live at most, one four times as long
    let directory = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var peaks: [Int] = []
    for allocations in [1_000_000, 4_000_000] {
      let path = directory.appendingPathComponent("churn-\(allocations).trace").path
      try SyntheticChurnTrace.write(to: path, allocations: allocations)
      // When each is reported, with a --top far above its 16 stacks
      let run = try Self.peakResidentKiB([
        "report", path, "--format", "json", "--top", "1000000", "--no-symbolize",
      ])
      // Then the totals are exactly those written
      try Self.expectChurnTotals(run.stdout, allocations: allocations)
      peaks.append(run.kib)
    }
    // And the longer trace took no more memory than the shorter, give or take 4 MiB of
    // allocator and page-cache noise: 3 M more events must not show
    #expect(peaks[1] <= peaks[0] + 4096, "peak RSS in KiB: \(peaks)")
  }

  @Test("a scan's million lost blocks cost report, timeline, objects nothing, and leaks 150 B each")
  func aLeakScansBlocksCostNothingToThePassesThatDoNotShowThem() throws {
    // Given one program, 1,000,000 blocks of 48 bytes left at exit, recorded with the leak scan
    // at exit (a record for each block found) and without
    let directory = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let program = try Harness.fixture("blocks", in: directory)
    var traces: [String] = []
    for scan in [false, true] {
      let path = directory.appendingPathComponent(scan ? "scan.trace" : "none.trace").path
      let result = try Harness.heapline(
        ["record", "-o", path, "--no-symbols"] + (scan ? [] : ["--no-leaks"])
          + ["--", program, "1000000", "48", "0", "0"], timeout: 600)
      #expect(result.status == 0, "\(result.stderr)")
      traces.append(path)
    }
    var stream = try TraceReader(path: traces[1]).events(leakBlocks: false)
    while try stream.next() != nil {}
    let scan = try #require(stream.metadata.leakScans.values.first)
    #expect(scan.blocksRead == 1_000_001 && scan.isComplete && scan.blocks.isEmpty)
    // When each pass reads both traces, then the scan's blocks take no memory, give or take
    // 8 MiB (they took about 100 bytes each, 100 MiB, when every pass kept them)
    for command in [
      ["report", "--format", "json", "--no-symbolize"], ["timeline", "-o", "/dev/null"],
      ["objects", "--no-symbolize", "-o", "/dev/null"],
    ] {
      let none = try Self.peakResidentKiB([command[0], traces[0]] + command.dropFirst())
      let withScan = try Self.peakResidentKiB([command[0], traces[1]] + command.dropFirst())
      #expect(withScan.kib <= none.kib + 8192, "\(command[0]): \(none.kib) KiB, \(withScan.kib)")
    }
    // And `leaks`, which shows them, holds at most 150 B for each block it found beyond what
    // `report` holds without them (its graph's rows and components flat, in 32-bit numbers: it
    // took 223 B with an array for each), and finds them all
    let report = try Self.peakResidentKiB(
      ["report", traces[0], "--format", "json", "--no-symbolize"])
    let leaks = try Self.peakResidentKiB(
      ["leaks", traces[1], "--format", "json", "--no-symbolize"], status: 1)
    #expect(
      leaks.kib <= report.kib + 150 * 1_000_001 / 1024,
      "report \(report.kib) KiB, leaks \(leaks.kib)")
    let found = try JSONSerialization.jsonObject(with: Data(leaks.stdout.utf8)) as? [String: Any]
    #expect((found?["definitely_lost"] as? [String: Any])?["blocks"] as? Int == 1)
    #expect((found?["indirectly_lost"] as? [String: Any])?["blocks"] as? Int == 1_000_000)
  }

  @Test("report's peak RSS is the same for 2 M and 100 M events, and its counts are exact")
  func reportMemoryStaysConstantOverAHundredMillionEvents() throws {
    // Given two traces of the same churn (64 blocks live at most), of two chunks of 500,000
    // allocations and of 101: about 2 M and 100 M events
    let directory = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var peaks: [Int] = []
    for repeats in [1, 100] {
      let path = directory.appendingPathComponent("churn-\(repeats).trace").path
      try SyntheticChurnTrace.writeRepeating(to: path, repeats: repeats)
      // When each is reported
      let run = try Self.peakResidentKiB(["report", path, "--format", "json", "--no-symbolize"])
      // Then the totals are exactly those written
      let allocations = (repeats + 1) * SyntheticChurnTrace.repeatedAllocations
      try Self.expectChurnTotals(run.stdout, allocations: allocations)
      peaks.append(run.kib)
    }
    // And a hundred times the events took no more memory, give or take 8 MiB: the reading
    // thread's and the pass's malloc arenas may each keep freed 2 MiB chunk buffers, which a
    // loaded machine's scheduling decides (this debug build: 39 MiB for 2 M events, 41 to 44 for
    // 100 M; a release build, 38 to 39 MiB for 10 M, 100 M and 1,000 M). A byte kept per event
    // would be 95 MiB, a cost per chunk over 80 KiB would show.
    #expect(peaks[1] <= peaks[0] + 8192, "peak RSS in KiB: \(peaks)")
  }

  @Test("report --format json --top 1000000 takes the memory of --top 10, and lists every stack")
  func reportMemoryDoesNotGrowWithTop() throws {
    // Given a trace with 4,000 distinct stacks of 24 frames
    let directory = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("stacks.trace").path
    try SyntheticChurnTrace.write(to: path, allocations: 200_000, stacks: 4_000, depth: 24)
    // When it is reported with 10 stacks, then with a --top far above its stack count
    let few = try Self.peakResidentKiB([
      "report", path, "--format", "json", "--top", "10", "--no-symbolize",
    ])
    let all = try Self.peakResidentKiB([
      "report", path, "--format", "json", "--top", "1000000", "--no-symbolize",
    ])
    // Then the long report lists all 4,000 stacks with their 24 frames each
    let object = try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: Any]
    let stacks = object?["top_stacks"] as? [[String: Any]] ?? []
    #expect(object?["stack_count"] as? Int == 4_000)
    #expect(stacks.count == 4_000)
    #expect(stacks.allSatisfy { ($0["frames"] as? [Any])?.count == 24 })
    #expect(stacks.allSatisfy { $0["allocations"] as? Int == 50 })
    // And it was written as it was made: 96,000 frames of JSON (about 24 MB) cost no more
    // than 8 MiB above the ten-stack report
    #expect(all.kib <= few.kib + 8192, "peak RSS in KiB: \(few.kib) for 10, \(all.kib) for all")
  }

  /// A trace whose shim thread wrote `scans` leak scans (a timer's), each of 50,000 lost blocks
  /// of 32 bytes (scan n's blocks from alloc counter n × 1,000,000).
  static func writeScans(_ scans: Int, to path: String) throws {
    var writer = TraceWriter()
    var setup = writer.makeChunk(threadSerial: 1)
    setup.stack(StackID(1), parent: .empty, pc: 0x40_1000)
    writer.append(setup)
    for id in 1...scans {
      var scan = LeakScan(id: UInt64(id), time: UInt64(id) * 10_000_000, trigger: .timer)
      scan.blocks = (0..<50_000).map { index in
        let counter = UInt64(id) * 1_000_000 + UInt64(index)
        return LeakedBlock(
          id: AllocID(threadSerial: 1, counter: counter),
          address: Address(0x1000_0000 + counter * 32),
          size: 32, stack: StackID(1),
          category: CategoryID(UInt64(SizeClass(containing: 32).index)),
          reachability: .unreachable)
      }
      var chunk = writer.makeChunk(threadSerial: 0)
      chunk.leakScan(scan)
      writer.append(chunk, encoding: .zstd)
    }
    writer.appendTrailer(endTime: UInt64(scans + 1) * 10_000_000)
    try writer.write(to: path)
  }

  @Test("leaks keeps the blocks of the scan it shows, not of every scan of the trace")
  func leaksHoldsOneScanOfMany() throws {
    // Given a trace of one scan of 50,000 lost blocks, and one of forty such scans
    let directory = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let one = directory.appendingPathComponent("one.trace").path
    let forty = directory.appendingPathComponent("forty.trace").path
    try Self.writeScans(1, to: one)
    try Self.writeScans(40, to: forty)
    // When leaks shows the one scan, and the latest and the third of the forty
    let base = try Self.peakResidentKiB(
      ["leaks", one, "--format", "json", "--no-symbolize"], status: 1)
    for extra in [[], ["--scan", "3"]] {
      let run = try Self.peakResidentKiB(
        ["leaks", forty, "--format", "json", "--no-symbolize"] + extra, status: 1)
      // Then the forty take the memory of one, give or take 16 MiB (they took 56 B a block
      // each, 107 MiB, when every scan kept its blocks), and the scan shown is whole
      #expect(
        run.kib <= base.kib + 16384, "\(extra): \(base.kib) KiB for one, \(run.kib) for forty")
      let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
      #expect((json?["scan"] as? [String: Any])?["id"] as? Int == (extra.isEmpty ? 40 : 3))
      #expect((json?["definitely_lost"] as? [String: Any])?["blocks"] as? Int == 50_000)
    }
  }

  /// What a pseudo-terminal shows of `heapline arguments` (stderr and stdout both), with no
  /// delay before the progress line, and the exit status.
  static func onATerminal(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let script = """
      import os, pty, sys, time
      pid, fd = pty.fork()
      if pid == 0:
          os.environ["HEAPLINE_PROGRESS_AFTER"] = "0"
          os.execv(sys.argv[1], sys.argv[1:])
      out, deadline = b"", time.monotonic() + 120
      while time.monotonic() < deadline:
          try:
              data = os.read(fd, 65536)
          except OSError:
              break
          if not data:
              break
          out += data
      else:
          os.kill(pid, 9)
      _, status = os.waitpid(pid, 0)
      sys.stdout.write(out.decode(errors="replace"))
      sys.exit(os.waitstatus_to_exitcode(status))
      """
    let result = try Harness.run(
      "/usr/bin/env", ["python3", "-c", script, Harness.heapline] + arguments)
    return (result.status, result.stdout)
  }

  @Test("on a terminal, report draws a progress line on stderr and erases it before the report")
  func progressLineOnATerminal() throws {
    let directory = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("churn.trace").path
    try SyntheticChurnTrace.write(to: path, allocations: 200_000)
    // Given stderr (and stdout) on a pseudo-terminal, and no delay before the line
    // When report runs there
    let result = try Self.onATerminal(["report", path, "--no-symbolize"])
    // Then the terminal saw the progress line, erased, then the report
    #expect(result.status == 0, "\(result.output)")
    let line = result.output.range(of: "\rheapline report: reading the trace, ")
    let erase = result.output.range(of: "\r\u{1B}[K")
    let report = result.output.range(of: "200,000")
    #expect(line != nil, "terminal output: \(result.output.debugDescription.prefix(400))")
    if let line, let erase, let report {
      #expect(line.lowerBound < erase.lowerBound && erase.upperBound <= report.lowerBound)
    } else {
      Issue.record("no erase or no report: \(result.output.debugDescription.prefix(400))")
    }
  }

  @Test("a progress line never goes back within a pass, and names the passes after the first")
  func progressLineOnlyMovesForward() throws {
    // Given a trace of 60 chunks, which takes a debug build seconds to view
    let directory = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("churn.trace").path
    try SyntheticChurnTrace.write(to: path, allocations: 1_500_000)
    for arguments in [
      ["view", path, "--no-symbolize", "-o", directory.appendingPathComponent("v.html").path],
      ["diff", path, path, "-o", directory.appendingPathComponent("d.txt").path],
    ] {
      // When an analysis of several passes (view), or of two traces at once (diff), runs on a
      // terminal
      let result = try Self.onATerminal(arguments)
      #expect(result.status == 0, "\(arguments[0]): \(result.output)")
      // Then every line it drew reads "pass N over the trace, P %" (or "reading the trace, P %"
      // for the first), and P never falls while N stays
      var last: (pass: Int, percent: Int) = (0, 0)
      var lines = 0
      let drawn = result.output.split(separator: "\r").map {
        $0.replacingOccurrences(of: "\u{1B}[K", with: "")
      }
      for text in drawn where text.hasPrefix("heapline \(arguments[0]): ") {
        let fields = text.split(separator: ": ", maxSplits: 1)[1].split(separator: ", ")
          .map(String.init)
        // Between passes it works, and never says it is finishing: another pass may follow
        #expect(!text.contains("finishing"), "\(arguments[0]): \(text)")
        guard fields.count == 3, fields[1].hasSuffix(" %"), let percent = Int(fields[1].dropLast(2))
        else { continue }
        let pass =
          fields[0] == "reading the trace" ? 1 : Int(fields[0].split(separator: " ")[1]) ?? -1
        #expect(pass >= last.pass, "\(arguments[0]): \(text) after pass \(last.pass)")
        if pass == last.pass {
          #expect(percent >= last.percent, "\(arguments[0]): \(text) after \(last.percent) %")
        }
        #expect((0...100).contains(percent))
        last = (pass, percent)
        lines += 1
      }
      #expect(lines > 0, "\(arguments[0]): \(result.output.debugDescription.prefix(400))")
      if arguments[0] == "diff" { #expect(last.pass == 1, "two traces read at once are one pass") }
      if arguments[0] == "view" { #expect(last.pass > 1, "view reads the trace more than once") }
    }
  }

  @Test("with stderr not a terminal, an analysis prints nothing extra on it")
  func noProgressLineWhenRedirected() throws {
    let directory = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("churn.trace").path
    try SyntheticChurnTrace.write(to: path, allocations: 200_000)
    // Given stderr on a pipe, and no delay before a progress line would be due
    for arguments in [
      ["report", path, "--no-symbolize"],
      ["timeline", path, "-o", directory.appendingPathComponent("t.csv").path],
      ["objects", path, "-o", directory.appendingPathComponent("o.csv").path],
    ] {
      // When the analysis runs
      let result = try Harness.heapline(arguments, environment: ["HEAPLINE_PROGRESS_AFTER": "0"])
      // Then it succeeds and stderr stays empty
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
      #expect(result.stderr == "", "\(arguments)")
    }
  }
}
