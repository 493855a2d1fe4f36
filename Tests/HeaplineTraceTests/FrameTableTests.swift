import HeaplineTrace
import Testing

@testable import HeaplineAnalysis

/// A profile's frames: each stored once, and named by the stacks that hold them.
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
    // When two stacks through make, and one with an address that has no symbol, are stored
    let first = table.places(of: [0x10, 0x20, 0x30])
    let second = table.places(of: [0x10, 0x20, 0x40])
    let unknown = table.places(of: [0x50])
    // Then each address's frames are stored once, in the order met, an unknown one as itself
    #expect(table.frames.map(\.pc) == [0x10, 0x20, 0x20, 0x30, 0x40, 0x50])
    #expect(table.frames.map { $0.function ?? "?" } == ["malloc", "fill", "make", "first", "second", "?"])
    #expect(first == [0, 1, 2, 3])
    #expect(second == [0, 1, 2, 4])
    #expect(unknown == [5])
    // And the frames a report shows are named by their places, without malloc, innermost first
    func shown(_ places: [Int], _ style: FrameStyle) -> [Int] {
      FrameTable.shown(places, traits: { style.traits(table.frames[$0]) }, style: style)
    }
    #expect(shown(first, FrameStyle()) == [1, 2, 3])
    #expect(shown(second, FrameStyle()) == [1, 2, 4])
    #expect(shown(unknown, FrameStyle()) == [5])
    // And with hidden frames shown, malloc too
    var all = FrameStyle()
    all.showsHiddenFrames = true
    #expect(shown(first, all) == [0, 1, 2, 3])
  }
}
