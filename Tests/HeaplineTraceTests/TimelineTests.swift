import HeaplineAnalysis
import HeaplineTrace
import Testing

@Suite("Timelines of traces with exactly known content")
struct TimelineTests {
  static let cache = CategoryID(0x4000_0001)

  /// Thread 1 allocates and frees; the shim's thread 0 writes RSS, marks and a warning:
  ///   t=0 a 100 (Cache) | t=5 b 200 | t=10 mark m1 | t=12 RSS 4096 | t=15 c 1000 (Cache):
  ///   peak 1300 | t=16 free c | t=20 free a | t=25 d 50 | t=30 warning critical | end 35
  static func trace() throws -> TemporaryTrace {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.category(cache, kind: .scope, name: "Cache")
    let a = chunk.alloc(at: 0, size: 100, address: 0x1000, category: cache)
    chunk.alloc(at: 5, size: 200, address: 0x2000)
    let c = chunk.alloc(at: 15, size: 1000, address: 0x3000, category: cache)
    chunk.free(at: 16, c)
    chunk.free(at: 20, a)
    chunk.alloc(at: 25, size: 50, address: 0x4000)
    var shim = writer.makeChunk(threadSerial: 0)
    shim.mark(at: 10, name: "m1")
    shim.rss(at: 12, residentBytes: 4096)
    shim.mark(at: 30, kind: .memoryWarning, name: "critical")
    writer.append(chunk)
    writer.append(shim)
    writer.appendTrailer(endTime: 35)
    return try TemporaryTrace(writer)
  }

  /// The CSV that `rows` make under the header of a timeline with one category column.
  static func csvText(_ rows: [String]) -> String {
    let header =
      "time_s,live_bytes,live_blocks,allocations,frees,peak_live_bytes,backing_store_bytes,"
      + "rss_bytes,live_bytes:Cache,live_bytes:other,marker"
    return ([header] + rows).map { $0 + "\r\n" }.joined()
  }

  func csv(_ trace: TemporaryTrace, interval: UInt64, top: Int = 1) throws -> String {
    var output = StringOutput()
    try TimelineCSVWriter.write(
      TraceReader(path: trace.path),
      options: TimelineOptions(intervalNanoseconds: interval, grouping: .categories(top: top)),
      to: &output)
    return output.text
  }

  @Test("each row is the state at the end of its step, with an extra row at the peak")
  func goldenCSV() throws {
    // Given the trace above, in steps of 10 ns with one category column
    let trace = try Self.trace()
    // When its timeline is written
    let text = try csv(trace, interval: 10)
    // Then every row is exact: the peak row ends at t=15, and the last row at the end, t=35
    let expected = [
      "0.000000010,300,2,2,0,300,0,,100,200,m1",
      "0.000000015,1300,3,1,0,1300,0,4096,1100,200,",
      "0.000000020,200,1,0,2,1300,0,4096,0,200,",
      "0.000000030,250,2,1,0,250,0,4096,0,250,memory warning: critical",
      "0.000000035,250,2,0,0,250,0,4096,0,250,",
    ]
    #expect(text == Self.csvText(expected))
  }

  @Test("the peak row is the state the peak's allocation left, before what followed it")
  func peakRowIsTheStateAtThePeak() throws {
    // Given a rise to a peak of 150 bytes at t=2, then, with live bytes still at the peak, a
    // mark, an RSS sample and a zero-byte allocation, and only then a free
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.category(Self.cache, kind: .scope, name: "Cache")
    let a = chunk.alloc(at: 1, size: 100, address: 0x1000, category: Self.cache)
    chunk.alloc(at: 2, size: 50, address: 0x2000)
    chunk.alloc(at: 5, size: 0, address: 0x3000)
    chunk.free(at: 6, a)
    var shim = writer.makeChunk(threadSerial: 0)
    shim.mark(at: 3, name: "after")
    shim.rss(at: 4, residentBytes: 8192)
    writer.append(chunk)
    writer.append(shim)
    writer.appendTrailer(endTime: 20)
    let trace = try TemporaryTrace(writer)
    // When its timeline is written in steps of 10 ns
    let text = try csv(trace, interval: 10)
    // Then the peak row has two blocks, no RSS and no mark; the rest of its step has them
    let expected = [
      "0.000000002,150,2,2,0,150,0,,100,50,",
      "0.000000010,50,2,1,1,150,0,8192,0,50,after",
      "0.000000020,50,2,0,0,50,0,8192,0,50,",
    ]
    #expect(text == Self.csvText(expected))
  }

  @Test(
    "the last row is the live bytes at exit and the largest row is the peak, at any interval",
    arguments: [1, 2, 3, 7, 10, 16, 34, 35, 1_000, 1_000_000_000] as [UInt64])
  func invariants(interval: UInt64) throws {
    let trace = try Self.trace()
    let report = try Statistics(contentsOf: trace.path)
    let timeline = try Timeline(
      reader: TraceReader(path: trace.path),
      options: TimelineOptions(intervalNanoseconds: interval))
    let rows = timeline.rows
    #expect(rows.last?.liveBytes == report.totals.liveBytes)
    #expect(rows.last?.endTime == 35)
    #expect(rows.map(\.liveBytes).max() == report.totals.peakLiveBytes)
    #expect(rows.map(\.peakLiveBytes).max() == report.totals.peakLiveBytes)
    #expect(rows.reduce(0) { $0 + $1.allocationCount } == report.totals.allocationCount)
    #expect(rows.reduce(0) { $0 + $1.freeCount } == report.totals.freeCount)
    #expect(rows.filter(\.isPeak).count == 1)
    #expect(rows.flatMap(\.marks) == ["m1", "memory warning: critical"])
    // And every other row shows what the report shows at the row's end
    for row in rows where !row.isPeak {
      let atEnd = try Statistics(
        contentsOf: trace.path, options: StatisticsOptions(upTo: .nanoseconds(row.endTime)))
      #expect(row.liveBytes == atEnd.totals.liveBytes, "row at \(row.endTime)")
      #expect(row.liveBlocks == atEnd.totals.liveBlocks, "row at \(row.endTime)")
      #expect(row.peakLiveBytes >= row.liveBytes)
    }
    // And regular rows end on multiples of the interval
    for row in rows.dropLast() where !row.isPeak { #expect(row.endTime % interval == 0) }
  }

  @Test("without category columns, rows show totals only")
  func totalsOnly() throws {
    let trace = try Self.trace()
    var output = StringOutput()
    try TimelineCSVWriter.write(
      TraceReader(path: trace.path),
      options: TimelineOptions(intervalNanoseconds: 100, grouping: .total), to: &output)
    #expect(
      output.text
        == "time_s,live_bytes,live_blocks,allocations,frees,peak_live_bytes,"
        + "backing_store_bytes,rss_bytes,marker\r\n"
        + "0.000000015,1300,3,3,0,1300,0,4096,m1\r\n"
        + "0.000000035,250,2,1,2,1300,0,4096,memory warning: critical\r\n")
  }

  @Test("categories rank by their own highest live bytes; the rest add up to other")
  func categoryRanking() throws {
    let trace = try Self.trace()
    let timeline = try Timeline(
      reader: TraceReader(path: trace.path),
      options: TimelineOptions(intervalNanoseconds: 10, grouping: .categories(top: 2)))
    // Cache rose to 1100, the 208-byte class to 200, the 64-byte class to 50
    #expect(timeline.categoryColumns == ["Cache", "Malloc 208 Bytes", "other"])
    for row in timeline.rows {
      #expect(row.categoryLiveBytes.reduce(0, +) == row.liveBytes)
    }
    #expect(timeline.rows.last?.categoryLiveBytes == [0, 200, 50])
  }

  @Test("fields that hold commas, quotes or line breaks are quoted as RFC 4180 says")
  func quoting() throws {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    let type = CategoryID(0x4000_0002)
    chunk.category(type, kind: .swiftClass, name: "Swift.Dictionary<Swift.String, Swift.Int>")
    chunk.alloc(at: 1, size: 64, address: 0x1000, category: type)
    chunk.mark(at: 2, name: "say \"cheese\"")
    chunk.mark(at: 3, name: "two\nlines")
    writer.append(chunk)
    writer.appendTrailer(endTime: 4)
    let trace = try TemporaryTrace(writer)
    let text = try csv(trace, interval: 1_000)
    let lines = text.components(separatedBy: "\r\n")
    #expect(
      lines[0].hasSuffix(
        ",\"live_bytes:Swift.Dictionary<Swift.String, Swift.Int>\",live_bytes:other,marker"))
    #expect(text.contains(",64,0,\"say \"\"cheese\"\"; two\nlines\"\r\n"))
  }

  @Test("backing stores are shown beside live bytes, not in them")
  func backingStores() throws {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    let images = CategoryID(0x4000_0003)
    chunk.category(images, kind: .backingStore, name: "Decoded images")
    chunk.backingStore(at: 1, .allocated, id: 0x7000, bytes: 4_096, category: images)
    chunk.alloc(at: 2, size: 48, address: 0x1000)
    chunk.backingStore(at: 11, .allocated, id: 0x9000, bytes: 1_000, category: images)
    chunk.backingStore(at: 12, .released, id: 0x7000, bytes: 4_096, category: images)
    writer.append(chunk)
    writer.appendTrailer(endTime: 20)
    let trace = try TemporaryTrace(writer)
    let timeline = try Timeline(
      reader: TraceReader(path: trace.path),
      options: TimelineOptions(intervalNanoseconds: 10, grouping: .total))
    #expect(timeline.rows.map(\.backingStoreBytes) == [4_096, 4_096, 1_000])
    #expect(timeline.rows.map(\.liveBytes) == [48, 48, 48])
  }

  @Test("a trace without events has one empty row at its end")
  func emptyTrace() throws {
    var writer = TraceWriter()
    writer.appendTrailer(endTime: 500)
    let trace = try TemporaryTrace(writer)
    let rows = try Timeline(
      reader: TraceReader(path: trace.path),
      options: TimelineOptions(intervalNanoseconds: 1_000)
    ).rows
    #expect(
      rows
        == [TimelineRow(endTime: 500)].map { row in
          var row = row
          row.categoryLiveBytes = [0]
          return row
        })
  }

  @Test("a zero interval is refused")
  func zeroInterval() {
    #expect(throws: AnalysisError.self) {
      try TimelineOptions(intervalNanoseconds: 0)
    }
    #expect(throws: AnalysisError.self) {
      try TimelineOptions(interval: .zero)
    }
  }
}
