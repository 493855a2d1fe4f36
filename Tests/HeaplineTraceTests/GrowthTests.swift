import HeaplineAnalysis
import HeaplineTrace
import Testing

@Suite("Growth between marks, and generations")
struct GrowthTests {
  /// t=1 p 100 (stack 1) | t=10 mark A | t=11 q 200, t=12 r 300 (stack 2) | t=13 free p |
  /// t=14 free q | t=20 mark B | t=21 s 400 (stack 1) | t=22 free r | t=25 mark A again | end 30
  static func trace() throws -> TemporaryTrace {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.stack(StackID(1), parent: .empty, pc: 0x40_1000)
    chunk.stack(StackID(2), parent: StackID(1), pc: 0x40_2000)
    let p = chunk.alloc(at: 1, size: 100, address: 0x1000, stack: StackID(1))
    chunk.mark(at: 10, name: "A")
    let q = chunk.alloc(at: 11, size: 200, address: 0x2000, stack: StackID(2))
    let r = chunk.alloc(at: 12, size: 300, address: 0x3000, stack: StackID(2))
    chunk.free(at: 13, p)
    chunk.free(at: 14, q)
    chunk.mark(at: 20, name: "B")
    chunk.alloc(at: 21, size: 400, address: 0x4000, stack: StackID(1))
    chunk.free(at: 22, r)
    chunk.mark(at: 25, name: "A")
    writer.append(chunk)
    writer.appendTrailer(endTime: 30)
    return try TemporaryTrace(writer)
  }

  func growth(_ from: MarkReference, _ to: MarkReference) throws -> Growth {
    let trace = try Self.trace()
    return try Growth(reader: TraceReader(path: trace.path), from: from, to: to)
  }

  @Test("growth is what was allocated after the first mark and is still live at the second")
  func betweenMarks() throws {
    let growth = try growth("A", "B")
    #expect(growth.count == 1)
    #expect(growth.bytes == 300)
    #expect((growth.fromTime, growth.toTime) == (10, 20))
    #expect(growth.categories.map(\.name) == ["Malloc 304 Bytes"])
    #expect(growth.stacks.map(\.id) == [StackID(2)])
    #expect(growth.stacks.first?.frames == [0x40_2000, 0x40_1000])
  }

  @Test(
    "start and end name the ends of the trace",
    arguments: [
      ("start", "B", 300), ("A", "end", 400), ("start", "end", 400), ("A", "A", 0),
      ("end", "end", 0), ("start", "start", 0),
    ] as [(String, String, UInt64)])
  func ends(from: String, to: String, bytes: UInt64) throws {
    #expect(try growth(MarkReference(from), MarkReference(to)).bytes == bytes)
  }

  @Test("an unknown mark, or marks in the wrong order, are errors that say so")
  func errors() throws {
    #expect(throws: AnalysisError.marksOutOfOrder(from: "B", to: "A")) { try growth("B", "A") }
    #expect(throws: AnalysisError.marksOutOfOrder(from: "end", to: "A")) { try growth("end", "A") }
    do {
      _ = try growth("X", "B")
      Issue.record("expected an error")
    } catch let error as AnalysisError {
      guard case .unknownMark("X", _, let known) = error else {
        Issue.record("unexpected \(error)")
        return
      }
      #expect(known == ["A", "B"])
      #expect(error.description.contains("no mark named 'X'"))
      #expect(error.description.contains("'A', 'B'"))
    }
  }

  @Test("generations split at every mark and keep what is live at the end")
  func generations() throws {
    let trace = try Self.trace()
    let generations = try Generation.all(in: TraceReader(path: trace.path))
    #expect(generations.map(\.name) == ["start", "A", "B", "A"])
    #expect(generations.map(\.startTime) == [0, 10, 20, 25])
    #expect(generations.map(\.endTime) == [10, 20, 25, 30])
    #expect(generations.map(\.allocationCount) == [1, 2, 1, 0])
    #expect(generations.map(\.allocatedBytes) == [100, 500, 400, 0])
    #expect(generations.map(\.persistentBytes) == [0, 0, 400, 0])
    #expect(generations[2].category(named: "Malloc 400 Bytes")?.count == 1)
  }

  @Test("the growth report lists categories and stacks, as text and as CSV")
  func report() throws {
    let report = GrowthReport(growth: try growth("A", "B"), symbolizer: nil, stackLimit: nil)
    let text = report.text(path: "t.trace")
    #expect(text.contains("from mark 'A' (10 ns) to mark 'B' (20 ns)"))
    #expect(text.contains("300 B in 1 block"))
    #expect(text.contains("#0 0x402000"))
    #expect(
      report.csv()
        == "group,name,count,bytes\r\ncategory,Malloc 304 Bytes,1,300\r\n"
        + "stack,0x401000;0x402000,1,300\r\n")
  }
}
