import Testing

@testable import HeaplineTrace

/// The SYMBOLS chunk's table: it survives its encoding, and the symbolizer takes its answers
/// before any file on disk.
@Suite("Stored symbols")
struct StoredSymbolsTests {
  static let module = TraceModule(
    path: "/gone/app", loadBias: 0x10000, segments: [.init(start: 0, size: 0x1000)],
    buildID: [0xab, 0xcd])

  static func table() -> StoredSymbols {
    var symbols = StoredSymbols()
    symbols.insert(
      [
        SymbolizerOutput.Entry(function: "$s3app4leafyyF", file: "/src/a.swift", line: 3),
        SymbolizerOutput.Entry(
          function: "$s3app3midyS2iF", file: "/src/a.swift", line: 9, column: 5),
      ], for: module, moduleAddress: 0x120)
    symbols.insert(
      [SymbolizerOutput.Entry(function: "make_blocks")], for: module, moduleAddress: 0x200)
    return symbols
  }

  @Test("the payload reads back to the same answers")
  func payloadRoundTrips() throws {
    let read = try StoredSymbols(payload: Self.table().payload)
    #expect(read.count == 2)
    #expect(
      read.answer(for: Self.module, moduleAddress: 0x120)
        == Self.table().answer(for: Self.module, moduleAddress: 0x120))
    #expect(read.answer(for: Self.module, moduleAddress: 0x200)?.first?.function == "make_blocks")
    // Another build at the same path matches nothing.
    var rebuilt = Self.module
    rebuilt.buildID = [0xef]
    #expect(read.answer(for: rebuilt, moduleAddress: 0x120) == nil)
  }

  @Test("the symbolizer names frames from stored symbols, with no tool and no file")
  func storedSymbolsNameFrames() {
    let symbolizer = Symbolizer(toolPath: nil, stored: Self.table())
    let frames = symbolizer.symbolize([0x10120, 0x10200, 0x10300], modules: [Self.module])
    #expect(frames[0x10120]?.map { $0.name(fullNames: false) } == ["leaf()", "mid(_:)"])
    #expect(
      frames[0x10120]?.map(\.displayName) == [
        "app.leaf() -> ()", "app.mid(Swift.Int) -> Swift.Int",
      ])
    #expect(frames[0x10120]?.map(\.isInlined) == [true, false])
    #expect(frames[0x10120]?.last?.sourceLocation == "/src/a.swift:9")
    #expect(frames[0x10200]?.map(\.displayName) == ["make_blocks"])
    #expect(frames[0x10300]?.map(\.displayName) == ["app+0x300"])
  }
}
