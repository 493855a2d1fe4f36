import HeaplineAnalysis
import HeaplineTrace
import Testing

@testable import HeaplinePprof

/// A profile's frames: each stored once, and named by the samples that show them.
@Suite struct FrameTableTests {
  @Test func stacksThatShareAnAddressShareItsFramesAndHideTheAllocator() {
    // Given malloc at 0x10, fill inlined into make at 0x20, and two callers at 0x30 and 0x40
    func frame(_ pc: UInt64, _ function: String, inlined: Bool = false) -> SymbolizedFrame {
      SymbolizedFrame(
        pc: pc, function: function, file: "/src/a.c", line: Int(pc), modulePath: "/bin/a",
        moduleAddress: pc, isInlined: inlined)
    }
    let symbols: [UInt64: [SymbolizedFrame]] = [
      0x10: [frame(0x10, "malloc")],
      0x20: [frame(0x20, "fill", inlined: true), frame(0x20, "make")],
      0x30: [frame(0x30, "first")], 0x40: [frame(0x40, "second")],
    ]
    var table = FrameTable(symbols: symbols)
    // When two stacks through make, and one with an address that has no symbol, are shown
    let first = table.shownFrames(of: [0x10, 0x20, 0x30], style: FrameStyle())
    let second = table.shownFrames(of: [0x10, 0x20, 0x40], style: FrameStyle())
    let unknown = table.shownFrames(of: [0x50], style: FrameStyle())
    // Then each address's frames are stored once, in the order met, an unknown one as itself
    #expect(table.frames.map(\.pc) == [0x10, 0x20, 0x20, 0x30, 0x40, 0x50])
    #expect(table.frames.map { $0.function ?? "?" } == ["malloc", "fill", "make", "first", "second", "?"])
    // And the samples name the frames a report shows, without malloc, innermost first
    #expect(first == [1, 2, 3])
    #expect(second == [1, 2, 4])
    #expect(unknown == [5])
    // And with hidden frames shown, malloc too
    var all = FrameStyle()
    all.showsHiddenFrames = true
    #expect(table.shownFrames(of: [0x10, 0x20, 0x30], style: all) == [0, 1, 2, 3])
  }
}
