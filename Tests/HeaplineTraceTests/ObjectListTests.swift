import HeaplineAnalysis
import HeaplineTrace
import Testing

@Suite("The object list, in allocation order")
struct ObjectListTests {
  func list(_ trace: TemporaryTrace, _ options: ObjectListOptions = ObjectListOptions()) throws
    -> (text: String, summary: ObjectListWriter.Summary)
  {
    var output = StringOutput()
    let summary = try ObjectListWriter.write(
      TraceReader(path: trace.path), options: options, symbolizer: nil, to: &output)
    return (output.text, summary)
  }

  @Test("each allocation is a row with its free time, or none while it is live")
  func rows() throws {
    let trace = try GrowthTests.trace()
    let text = try list(trace).text
    #expect(
      text
        == [
          "index,alloc_time_s,free_time_s,address,size,category,stack_id,top_frame,"
            + "top_frame_source",
          "0,0.000000001,0.000000013,0x1000,100,Malloc 112 Bytes,1,0x401000,",
          "1,0.000000011,0.000000014,0x2000,200,Malloc 208 Bytes,2,0x402000,",
          "2,0.000000012,0.000000022,0x3000,300,Malloc 304 Bytes,2,0x402000,",
          "3,0.000000021,,0x4000,400,Malloc 400 Bytes,1,0x401000,",
        ].map { $0 + "\r\n" }.joined())
  }

  @Test(
    "live-at keeps the objects allocated by then and not yet freed",
    arguments: [(12, [0, 1, 2]), (13, [1, 2]), (20, [2]), (30, [3]), (0, [])] as [(Int, [Int])])
  func liveAt(time: Int, indexes: [Int]) throws {
    let trace = try GrowthTests.trace()
    let text = try list(trace, ObjectListOptions(liveAt: .nanoseconds(time))).text
    let rows = text.split(separator: "\r\n").dropFirst()
    #expect(rows.map { Int($0.prefix { $0 != "," })! } == indexes)
  }

  @Test("a category keeps only its objects; an unknown one is an error")
  func category() throws {
    let trace = try GrowthTests.trace()
    let text = try list(trace, ObjectListOptions(category: "Malloc 208 Bytes")).text
    #expect(text.split(separator: "\r\n").count == 2)
    #expect(text.contains("\r\n1,0.000000011,"))
    #expect(throws: AnalysisError.unknownCategory("Nope", path: trace.path)) {
      try list(trace, ObjectListOptions(category: "Nope"))
    }
  }

  @Test("the largest stack and category ids are rows like any other, and found by name")
  func largestIDs() throws {
    // Given allocations whose stack id, category id or both are 2^64 - 1, between others
    let top = UInt64.max
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.alloc(at: 1, size: 16, address: 0x1000, stack: StackID(top))
    chunk.alloc(at: 2, size: 16, address: 0x2000, stack: StackID(5), category: CategoryID(top))
    chunk.alloc(at: 3, size: 16, address: 0x3000, stack: StackID(top), category: CategoryID(top))
    chunk.alloc(at: 4, size: 16, address: 0x4000, stack: StackID(5))
    writer.append(chunk)
    let trace = try TemporaryTrace(writer)
    // When the objects are listed, all of them and then those of the largest category
    let rows = try list(trace).text.split(separator: "\r\n").dropFirst()
    let named = try list(trace, ObjectListOptions(category: "Category \(top)")).text
    // Then every row has its nine fields, with the ids as the trace holds them
    let fields = rows.map { $0.split(separator: ",", omittingEmptySubsequences: false) }
    #expect(fields.map(\.count) == [9, 9, 9, 9])
    #expect(
      fields.map { $0[5...6].joined(separator: ",") } == [
        "Malloc 16 Bytes,\(top)", "Category \(top),5", "Category \(top),\(top)",
        "Malloc 16 Bytes,5",
      ])
    // And the largest category is found by its name: its two rows and the header
    #expect(named.split(separator: "\r\n").count == 3)
  }

  @Test("rows wait on disk, not in memory: 64 blocks tracked for 20,000 objects")
  func bounded() throws {
    // Given 20,000 objects, each freed 127 ns after its allocation, 64 live at most
    let trace = try TimelineStreamingTests.churn(allocations: 20_000)
    let (text, summary) = try list(trace)
    #expect(summary.rowCount == 20_000)
    #expect(summary.maxTrackedBlocks == 64)
    // Then rows come in allocation order with their free times, though most were written to
    // the temporary file before their free came
    let rows = text.split(separator: "\r\n").dropFirst().map {
      $0.split(separator: ",", omittingEmptySubsequences: false)
    }
    #expect(rows.count == 20_000)
    var mismatches = 0
    for (index, row) in rows.enumerated() {
      let allocated = UInt64(index) * 2 + 1
      let freed = index < 20_000 - 64 ? "0.\(pad(allocated + 127))" : ""
      if row[0] != "\(index)" || row[1] != "0.\(pad(allocated))" || row[2] != freed {
        mismatches += 1
      }
    }
    #expect(mismatches == 0)
  }

  private func pad(_ nanoseconds: UInt64) -> String {
    let digits = String(nanoseconds)
    return String(repeating: "0", count: 9 - digits.count) + digits
  }
}
