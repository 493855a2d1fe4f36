import HeaplineTrace
import Testing

@testable import HeaplineAnalysis

@Suite("Timelines take memory for the live blocks, never for the number of events or rows")
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
  }

  func measure(allocations: Int) throws -> Measure {
    let trace = try Self.churn(allocations: allocations)
    let reader = try TraceReader(path: trace.path)
    let scan = try TimelineScan(
      reader: reader, options: TimelineOptions(intervalNanoseconds: 2_000, grouping: .total))
    var output = CountingOutput()
    try output.write(TimelineCSVWriter.header(categoryColumns: scan.categoryColumns))
    try scan.run { row throws(AnalysisError) in try output.write(TimelineCSVWriter.record(row)) }
    return Measure(
      events: scan.eventsRead, rows: scan.rowsEmitted, lines: output.lineCount,
      maxTrackedBlocks: scan.maxTrackedBlocks)
  }

  @Test("a million events: 64 blocks tracked, whatever the trace's length")
  func millionEvents() throws {
    // Given a trace of 500,000 allocations and 499,936 frees, 64 blocks live at most
    let large = try measure(allocations: 500_000)
    #expect(large.events == 999_936)
    // Then the CSV has a row per 2 µs step, and one at the peak
    #expect(large.rows == 500 + 1)
    #expect(large.lines == 1 + 501)
    // And the pass held no more than the 64 live blocks, as for a trace a tenth the size
    #expect(large.maxTrackedBlocks == 64)
    let small = try measure(allocations: 50_000)
    #expect(small.maxTrackedBlocks == large.maxTrackedBlocks)
  }

  @Test("half a million rows wait on disk, not in memory, and come back exact")
  func rowsPastTheBufferWaitOnDisk() throws {
    // Given the same churn, in rows of 2 ns: one allocation and one free a row
    let trace = try Self.churn(allocations: 500_000)
    let scan = try TimelineScan(
      reader: TraceReader(path: trace.path),
      options: TimelineOptions(intervalNanoseconds: 2, grouping: .categories(top: 1)))
    // When the rows are handed over
    var rows = 0, allocations: UInt64 = 0, frees: UInt64 = 0, mostBlocks: UInt64 = 0
    var previousEnd: UInt64 = 0, peaks = 0
    try scan.run { row in
      rows += 1
      allocations += row.allocationCount
      frees += row.freeCount
      mostBlocks = max(mostBlocks, row.liveBlocks)
      #expect(row.liveBytes == row.liveBlocks * 32)
      #expect(row.categoryLiveBytes == [row.liveBytes, 0])
      if row.isPeak {
        peaks += 1
      } else {
        #expect(row.endTime == previousEnd + 2 || rows == 1)
        previousEnd = row.endTime
      }
    }
    // Then most of them waited in the file, and every one came back: a row per step, the
    // peak's, each allocation and free once, never more than 64 blocks live
    #expect(scan.rowBytesOnDisk >= 4 << 20)
    #expect(rows == 500_000 + 1)
    #expect(peaks == 1)
    #expect(allocations == 500_000)
    #expect(frees == 499_936)
    #expect(mostBlocks == 64)
  }
}
