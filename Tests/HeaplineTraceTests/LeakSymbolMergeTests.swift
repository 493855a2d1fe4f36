import HeaplineTrace
import Testing

@testable import HeaplineAnalysis

/// Leak groups merge on what a reader sees, the symbolized frames, not on return addresses:
/// an optimized build's copies of one allocation site differ only in their addresses.
@Suite struct LeakSymbolMergeTests {
  static let controller = CategoryInfo(
    id: CategoryID(0x400), kind: .swiftClass, name: "App.ViewController")
  static let store = CategoryInfo(id: CategoryID(0x401), kind: .swiftClass, name: "App.Store")

  /// A frame of `function` at `line` of App.swift, returning to `pc` in the program.
  static func frame(_ pc: UInt64, _ function: String?, line: Int?) -> SymbolizedFrame {
    SymbolizedFrame(
      pc: pc, function: function, file: function == nil ? nil : "App.swift", line: line,
      modulePath: "/bin/app", moduleAddress: pc - 0x1000)
  }

  /// A cycle of a controller (200 bytes) and its store (232 bytes), allocated at `pcs`.
  static func cycle(
    _ pcs: (UInt64, UInt64), functions: (String?, String?) = ("makeController()", "main")
  ) -> LeakGroup {
    func member(_ category: CategoryInfo, _ size: UInt64, _ pc: UInt64) -> LeakGroupMember {
      var member = LeakGroupMember(
        id: AllocID(threadSerial: 1, counter: pc), address: Address(pc * 0x100), size: size,
        category: category, stack: StackID(pc))
      member.frames = [
        SymbolizedFrame(pc: 0x9, function: "malloc", modulePath: "/lib/libc.so.6"),
        frame(pc, functions.0, line: functions.0 == nil ? nil : 12),
        frame(pc + 0x40, functions.1, line: functions.1 == nil ? nil : 30),
      ]
      return member
    }
    var group = LeakGroup(
      kind: .cycle, name: "ViewController → Store → ViewController", instances: 1,
      members: [member(controller, 200, pcs.0), member(store, 232, pcs.1)])
    group.definitelyLost = LeakAmount(blocks: 2, bytes: 432)
    return group
  }

  @Test func cyclesWhoseStacksDifferOnlyInReturnAddressesAreOneGroup() {
    // Given three cycles from one unrolled loop: the same functions and lines, other addresses
    let groups = [
      Self.cycle((0x2000, 0x2100)), Self.cycle((0x3000, 0x3100)), Self.cycle((0x4000, 0x4100)),
    ]
    // When they are merged by their symbols
    let merged = LeakGrouping.mergedBySymbols(groups)
    // Then they are one group of three, with every block and byte
    #expect(merged.count == 1)
    #expect(merged[0].instances == 3)
    #expect(merged[0].definitelyLost == LeakAmount(blocks: 6, bytes: 1_296))
    #expect(merged[0].members.map(\.stack) == [StackID(0x2000), StackID(0x2100)])
  }

  @Test func cyclesFromOtherFunctionsStayApart() {
    let groups = [
      Self.cycle((0x2000, 0x2100)),
      Self.cycle((0x3000, 0x3100), functions: ("makeOther()", "main")),
      Self.cycle((0x4000, 0x4100)),
    ]
    let merged = LeakGrouping.mergedBySymbols(groups)
    #expect(merged.map(\.instances).sorted() == [1, 2])
    #expect(merged.map(\.total.bytes).sorted() == [432, 864])
  }

  @Test func framesWithoutSymbolsCountByAddress() {
    // Two cycles whose frames have no symbol: their addresses are all there is to read
    let apart = LeakGrouping.mergedBySymbols([
      Self.cycle((0x2000, 0x2100), functions: (nil, nil)),
      Self.cycle((0x3000, 0x3100), functions: (nil, nil)),
    ])
    #expect(apart.map(\.instances) == [1, 1])
    // And the same addresses are one leak
    let same = LeakGrouping.mergedBySymbols([
      Self.cycle((0x2000, 0x2100), functions: (nil, nil)),
      Self.cycle((0x2000, 0x2100), functions: (nil, nil)),
    ])
    #expect(same.map(\.instances) == [2])
  }
}
