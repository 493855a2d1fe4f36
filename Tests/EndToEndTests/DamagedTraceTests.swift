import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// Damaged and unusual traces through the CLI (issue 8): a cut trace reads its whole chunks and
/// says what it left, damage is a one-line error with the offset, and nothing hangs or writes
/// without end.
@Suite struct DamagedTraceTests {
  /// A real trace of `blocks 100000 48 50000 0`, with its chunks.
  static func recorded() throws -> (trace: URL, reader: TraceReader, directory: URL) {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("blocks", in: dir)
    let trace = dir.appendingPathComponent("blocks.trace")
    let record = try Harness.heapline([
      "record", "-o", trace.path, "--", program, "100000", "48", "50000", "0",
    ])
    #expect(record.status == 0, "\(record.stderr)")
    return (trace, try TraceReader(path: trace.path), dir)
  }

  func totals(_ json: String) throws -> [String: Int] {
    let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
    return (object?["totals"] as? [String: Any])?.compactMapValues { $0 as? Int } ?? [:]
  }

  @Test func aTraceCutMidChunkReportsExactlyItsWholeChunksWithANoticeFromEveryCommand() throws {
    // Given a real trace cut 100 bytes into its largest chunk, and the same trace cut where
    // that chunk starts
    let (trace, reader, dir) = try Self.recorded()
    let last = try #require(reader.chunks.max { $0.storedLength < $1.storedLength })
    try #require(last.storedLength > 52)
    let data = try Data(contentsOf: trace)
    let cut = dir.appendingPathComponent("cut.trace")
    try data.prefix(Int(last.offset) + 100).write(to: cut)
    let whole = dir.appendingPathComponent("whole.trace")
    try data.prefix(Int(last.offset)).write(to: whole)
    // When both are reported
    let cutReport = try Harness.heapline(["report", cut.path, "--format", "json"])
    let wholeReport = try Harness.heapline(["report", whole.path, "--format", "json"])
    // Then the cut one reads, says which bytes it left, and counts what the whole chunks hold
    #expect(cutReport.status == 0)
    let notice =
      "heapline: warning: trace '\(cut.path)' was cut short: 100 bytes of a partial chunk at"
      + " offset \(last.offset) were not read"
    #expect(cutReport.stderr.hasPrefix(notice), "\(cutReport.stderr)")
    #expect(cutReport.stderr.split(separator: "\n").count == 1)
    let figures = try totals(cutReport.stdout)
    #expect(figures["allocations"] != nil)
    #expect(figures == (try totals(wholeReport.stdout)))
    let full = try totals(try Harness.heapline(["report", trace.path, "--format", "json"]).stdout)
    #expect(figures["allocations"] ?? .max < full["allocations"] ?? 0)
    // And every other command says so too
    for command in [
      ["timeline", cut.path], ["objects", cut.path], ["diff", cut.path],
      ["export", cut.path, "--format", "folded", "--no-symbolize"], ["leaks", cut.path],
    ] {
      let result = try Harness.heapline(command)
      #expect(result.stderr.hasPrefix(notice), "\(command[0]): \(result.stderr)")
    }
  }

  @Test func aFlippedBitInAChunkBaseTimeIsAnErrorNotAnEndlessTimeline() throws {
    // Given a real trace with one bit flipped in the high bytes of a chunk's base time
    let (trace, reader, _) = try Self.recorded()
    let chunk = reader.chunks[0]
    var data = try Data(contentsOf: trace)
    data[Int(chunk.offset) + 24 + 6] ^= 0x10
    try data.write(to: trace)
    // Then the timeline writes nothing and fails with one line naming the chunk
    let result = try Harness.heapline(["timeline", trace.path])
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(
      result.stderr
        == "heapline: corrupt trace '\(trace.path)': checksum mismatch in chunk at offset"
        + " \(chunk.offset)\n")
  }

  @Test func aDiffOfTwoDamagedTracesNamesTheFirstOfThemAsIfTheyWereReadInTurn() throws {
    // Given two traces whose events chunk ends in a record of an unknown tag, which opening a
    // trace does not meet (its checksum is right): the passes do, and diff runs them at once
    let dir = try Harness.temporaryDirectory()
    let paths = try ["a", "b"].map { name in
      var writer = TraceWriter()
      var chunk = writer.makeChunk(threadSerial: 1)
      for index in 0..<3 as Range<UInt64> {
        chunk.alloc(at: 100 + index, size: 64, address: Address(0x1000 + index * 64))
      }
      chunk.appendRaw([0xEE])
      writer.append(chunk)
      writer.appendTrailer(
        TraceTrailer(
          endTime: 1_000, eventChunkCount: 1, allocCount: 3, freeCount: 0, endReason: .exited,
          exitStatus: 0, lostEvents: 0, flags: .writtenByRecorder, recoveredChunkCount: 0))
      let path = dir.appendingPathComponent("\(name).trace").path
      try writer.write(to: path)
      _ = try TraceReader(path: path)
      return path
    }
    // Then diff fails with the one line of the trace named first, in either order
    for (first, second) in [(paths[0], paths[1]), (paths[1], paths[0])] {
      let result = try Harness.heapline(["diff", first, second])
      #expect(result.status == 2)
      #expect(result.stdout.isEmpty)
      #expect(
        result.stderr.hasPrefix("heapline: corrupt trace '\(first)': ")
          && result.stderr.contains("unknown record tag 238")
          && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }
  }

  @Test func aTraceWithAChunkCutOutIsAnErrorThatSaysChunksAreMissing() throws {
    // Given a real trace with its first events chunk removed
    let (trace, reader, _) = try Self.recorded()
    let chunk = try #require(reader.chunks.first { $0.threadSerial != 0 })
    var data = try Data(contentsOf: trace)
    data.removeSubrange(Int(chunk.offset)..<Int(chunk.endOffset))
    try data.write(to: trace)
    // Then the report fails: the trailer counts one more chunk than the file holds
    let result = try Harness.heapline(["report", trace.path])
    let trailer = reader.trailerChunk!.offset - (chunk.endOffset - chunk.offset)
    let count = reader.chunks.count
    #expect(result.status == 2)
    #expect(
      result.stderr
        == "heapline: corrupt trace '\(trace.path)': the trailer at offset \(trailer) does not"
        + " match the chunks (it counts \(count) event chunks, the file holds \(count - 1))\n")
  }

  @Test func aRealTraceWithABitFlippedAnywhereFailsInOneLineNamingAnOffset() throws {
    // Given a real trace, and 24 bits spread over its length (header, chunks and trailer)
    let (trace, _, dir) = try Self.recorded()
    let data = try Data(contentsOf: trace)
    let damaged = dir.appendingPathComponent("damaged.trace")
    for step in 0..<24 {
      var byte = step * (data.count - 1) / 23
      // A longer trailer reads as a trailer cut short (a notice, not an error): not this test.
      let trailerLength = data.count - 112 + 16
      if (trailerLength..<trailerLength + 4).contains(byte) { byte = trailerLength + 4 }
      var copy = data
      copy[byte] ^= UInt8(1 << (step % 8))
      try copy.write(to: damaged)
      // Then every report fails with one line about the file and an offset, writing nothing
      let result = try Harness.heapline(["report", damaged.path, "--no-symbolize"])
      #expect(result.status == 2, "byte \(byte): \(result.stderr)")
      #expect(result.stdout.isEmpty, "byte \(byte)")
      let lines = result.stderr.split(separator: "\n")
      #expect(lines.count == 1, "byte \(byte): \(result.stderr)")
      #expect(
        result.stderr.hasPrefix("heapline: corrupt trace '\(damaged.path)': ")
          && result.stderr.contains("offset"), "byte \(byte): \(result.stderr)")
    }
  }

  @Test func aFIFOGivenAsATraceIsRefusedAtOnce() throws {
    let dir = try Harness.temporaryDirectory()
    let fifo = dir.appendingPathComponent("pipe.trace").path
    #expect(mkfifo(fifo, 0o600) == 0)
    let result = try Harness.heapline(["report", fifo])
    #expect(result.status == 2)
    #expect(result.stderr == "heapline: cannot open trace '\(fifo)': not a regular file\n")
  }

  @Test func anInstantInATraceWithoutItsTrailerIsReadNotCalledCorrupt() throws {
    // Given a real trace of 3,000,000 blocks cut where its main thread's last chunk starts, as
    // a killed recording leaves it: the thread's last whole chunk names allocation infos that
    // its earlier chunks defined, and decoded alone to find the trace's end, it read as corrupt
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("blocks", in: dir)
    let trace = dir.appendingPathComponent("long.trace")
    let record = try Harness.heapline([
      "record", "--no-leaks", "-o", trace.path, "--", program, "3000000", "48", "1000000", "0",
    ])
    #expect(record.status == 0, "\(record.stderr)")
    let main = try TraceReader(path: trace.path).chunks.filter { $0.threadSerial == 1 }
    try #require(main.count >= 3)
    let cut = dir.appendingPathComponent("cut.trace")
    try Data(contentsOf: trace).prefix(Int(main[main.count - 1].offset)).write(to: cut)
    // Then an instant in it, and the page, are read, with the notice that it has no trailer
    let out = dir.appendingPathComponent("out").path
    for command in [
      ["report", cut.path, "--at", "0.001"], ["view", cut.path, "-o", out + ".html"],
      ["objects", cut.path, "--live-at", "0.001", "-o", out + ".csv"],
      ["export", cut.path, "--format", "folded", "--at", "0.001", "--no-symbolize"],
    ] {
      let result = try Harness.heapline(command)
      #expect(result.status == 0, "\(command[0]): \(result.stderr)")
      #expect(result.stderr.hasPrefix("heapline: warning: trace '\(cut.path)' has no trailer"))
    }
  }

  @Test func anInstantPastTheEndIsAnErrorGivingTheTraceLength() throws {
    let (trace, reader, dir) = try Self.recorded()
    let end = try #require(reader.trailer?.endTime)
    let result = try Harness.heapline(["report", trace.path, "--at", "1000"])
    #expect(result.status == 2)
    #expect(
      result.stderr
        == "heapline: --at 1000.0 s is past the end of trace '\(trace.path)', which is"
        + " \(TimeText.duration(end)) long\n")
    // objects' --live-at, the same instant, is refused the same way, before any output
    let list = dir.appendingPathComponent("past.csv")
    let objects = try Harness.heapline([
      "objects", trace.path, "--live-at", "1000", "-o", list.path,
    ])
    #expect(objects.status == 2)
    #expect(
      objects.stderr
        == "heapline: --live-at 1000.0 s is past the end of trace '\(trace.path)', which is"
        + " \(TimeText.duration(end)) long\n")
    #expect(!FileManager.default.fileExists(atPath: list.path))
    let atEnd = try Harness.heapline([
      "report", trace.path, "--at", String(Double(end / 1_000_000) / 1e3),
    ])
    #expect(atEnd.status == 0, "\(atEnd.stderr)")
  }

  /// A one-second trace made here: thread 1 allocates 3 blocks of 64 bytes, the shim's thread
  /// writes 7 lost events, and `heapline record` finished it after the process died (end
  /// reason 4) with 2 recovered chunks and exit status 134.
  static func unfinished(in dir: URL) throws -> String {
    var writer = TraceWriter()
    var shim = writer.makeChunk(threadSerial: 0)
    shim.mark(at: 10, name: "A")
    shim.lost(at: 20, reason: .signalHandler, count: 7)
    writer.append(shim)
    var chunk = writer.makeChunk(threadSerial: 1)
    for index in 0..<3 as Range<UInt64> {
      chunk.alloc(at: 100 + index, size: 64, address: Address(0x1000 + index * 64))
    }
    writer.append(chunk)
    writer.appendTrailer(
      TraceTrailer(
        endTime: 1_000_000_000, eventChunkCount: 2, allocCount: 3, freeCount: 0,
        endReason: .endedUnfinished, exitStatus: 134, lostEvents: 7,
        flags: .writtenByRecorder, recoveredChunkCount: 2))
    let path = dir.appendingPathComponent("unfinished.trace").path
    try writer.write(to: path)
    return path
  }

  @Test func lostEventsAndAnUnfinishedEndingAreToldByEveryCommand() throws {
    let dir = try Harness.temporaryDirectory()
    let trace = try Self.unfinished(in: dir)
    let lost =
      "heapline: warning: trace '\(trace)': 7 allocations and frees were not recorded (7 signal"
      + " handlers interrupting the shim): the figures are not exact\n"
    let ending =
      "the process ended before the shim could finish: heapline record recovered 2 chunks;"
      + " exit status 134"
    for command in [
      ["report", trace], ["timeline", trace], ["objects", trace], ["diff", trace],
      ["export", trace, "--format", "folded", "--no-symbolize"], ["leaks", trace],
    ] {
      let result = try Harness.heapline(command)
      #expect(
        result.stderr.hasPrefix(lost + "heapline: warning: trace '\(trace)': \(ending)\n"),
        "\(command[0]): \(result.stderr)")
    }
    let text = try Harness.heapline(["report", trace, "--no-symbolize"])
    #expect(text.stdout.contains("  Trace complete, \(ending)\n"), "\(text.stdout)")
    #expect(
      text.stdout.contains(
        "  Lost events: 7 allocations and frees were not recorded (7 signal handlers"
          + " interrupting the shim): the figures are not exact\n"))
    let json = try Harness.heapline(["report", trace, "--format", "json", "--no-symbolize"])
    let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    let summary = try #require(object?["trace"] as? [String: Any])
    #expect(summary["end_reason"] as? String == "ended_unfinished")
    #expect(summary["exit_status"] as? Int == 134)
    #expect(summary["recovered_chunks"] as? Int == 2)
    let lostEvents = try #require(summary["lost_events"] as? [String: Any])
    #expect(lostEvents["total"] as? Int == 7)
    let reasons = try #require(lostEvents["by_reason"] as? [[String: Any]])
    #expect(reasons.map { $0["reason"] as? Int } == [2])
    #expect(reasons.map { $0["count"] as? Int } == [7])
  }

  @Test func aTimelineOfAbsurdlyManyRowsIsRefusedBeforeItWritesAny() throws {
    // Given a one-second trace and a step of one nanosecond: a billion rows
    let dir = try Harness.temporaryDirectory()
    let trace = try Self.unfinished(in: dir)
    let result = try Harness.heapline(["timeline", trace, "--interval", "0.000001"])
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(
      result.stderr.hasSuffix(
        "heapline: invalid interval: 1000000002 rows of 1 ns over the trace's 1.000 s exceed"
          + " 10000000; use a longer interval\n"), "\(result.stderr)")
  }
}
