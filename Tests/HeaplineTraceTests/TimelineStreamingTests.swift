import HeaplineAnalysis
import HeaplineTrace
import Testing

@Suite("Timelines stream: memory follows the live blocks, never the number of events")
struct TimelineStreamingTests {
  /// `allocations` blocks of 32 bytes, 2 ns apart, each freed 64 allocations later, in
  /// chunks of 20,000 records: about twice as many events as allocations, never more than 64
  /// blocks live.
  static func churn(allocations: Int) throws -> TemporaryTrace {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    var window = [AllocID](repeating: AllocID(threadSerial: 0, counter: 0), count: 64)
    for index in 0..<allocations {
      let time = UInt64(index) * 2
      if index >= 64 { chunk.free(at: time, window[index % 64]) }
      window[index % 64] = chunk.alloc(at: time + 1, size: 32, address: Address(UInt64(index) * 32))
      if chunk.recordCount >= 20_000 {
        writer.append(chunk, encoding: .zstd)
        chunk = writer.makeChunk(threadSerial: 1)
      }
    }
    writer.append(chunk, encoding: .zstd)
    writer.appendTrailer(endTime: UInt64(allocations) * 2)
    return try TemporaryTrace(writer)
  }

  struct Measure {
    var events: UInt64
    var rows: UInt64
    var lines: Int
    var maxTrackedBlocks: Int
    var eventsReadAtFirstRow: UInt64
  }

  func measure(allocations: Int) throws -> Measure {
    let trace = try Self.churn(allocations: allocations)
    let reader = try TraceReader(path: trace.path)
    let scan = try TimelineScan(
      reader: reader, options: TimelineOptions(intervalNanoseconds: 2_000, grouping: .total))
    var output = CountingOutput()
    var eventsReadAtFirstRow: UInt64?
    try output.write(TimelineCSVWriter.header(categoryColumns: scan.categoryColumns))
    try scan.run { row throws(AnalysisError) in
      if eventsReadAtFirstRow == nil, !row.isPeak { eventsReadAtFirstRow = scan.eventsRead }
      try output.write(TimelineCSVWriter.record(row))
    }
    return Measure(
      events: scan.eventsRead, rows: scan.rowsEmitted, lines: output.lineCount,
      maxTrackedBlocks: scan.maxTrackedBlocks, eventsReadAtFirstRow: eventsReadAtFirstRow ?? 0)
  }

  @Test("a million events: 64 blocks tracked, and rows written while the trace is read")
  func millionEvents() throws {
    // Given a trace of 500,000 allocations and 499,936 frees, 64 blocks live at most
    let large = try measure(allocations: 500_000)
    #expect(large.events == 999_936)
    // Then the CSV has a row per 2 µs step, and one at the peak
    #expect(large.rows == 500 + 1)
    #expect(large.lines == 1 + 501)
    // And neither pass held more than the 64 live blocks
    #expect(large.maxTrackedBlocks == 64)
    // And the first step's row went out after its few thousand events, not after the last
    #expect(large.eventsReadAtFirstRow < 5_000)
    // And a trace a tenth the size held exactly as much
    let small = try measure(allocations: 50_000)
    #expect(small.maxTrackedBlocks == large.maxTrackedBlocks)
  }
}
