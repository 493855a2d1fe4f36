import Foundation
import Testing

@testable import HeaplineTrace

/// A function with a C name, so its symbolized name does not depend on Swift's mangling.
@_cdecl("heapline_symbolization_target")
func symbolizationTarget() -> Int32 { 42 }

@Suite("Symbolization of return addresses")
struct SymbolizerTests {
  static let module = TraceModule(
    path: "/nonexistent/libdemo.so", loadBias: 0x7F00_0000_0000,
    segments: [TraceModule.Segment(start: 0, size: 0x10_0000)])

  @Test("a symbolizer that never finishes is stopped at its deadline; one that finishes is read")
  func hungToolIsStopped() {
    // Given a tool that would run for ten minutes, and one that answers at once
    // When the first runs with a deadline of half a second, the second with the default
    let hung = Symbolizer.run("/bin/sleep", arguments: ["600"], input: Data(), timeout: 0.5)
    let answered = Symbolizer.run("/bin/cat", arguments: [], input: Data("0x10\n".utf8))
    // Then the first gives nothing (its frames stay module offsets), the second its output
    #expect(hung == nil)
    #expect(answered == Data("0x10\n".utf8))
  }

  @Test("llvm-symbolizer blocks parse into frames, inlined ones first")
  func parsesBlocks() {
    let output = """
      $s4main4leafyyF
      /src/main.swift:3:5
      $s4main3midyyF
      /src/main.swift:7:0
      $s4main3topyyF
      /<compiler-generated>:0:0

      ??
      ??:0:0

      malloc
      ./malloc/malloc.c:0:0

      """
    let blocks = SymbolizerOutput.parse(output)
    #expect(blocks.count == 3)
    #expect(blocks[0].map(\.function) == ["$s4main4leafyyF", "$s4main3midyyF", "$s4main3topyyF"])
    #expect(blocks[0][2].file == nil)
    #expect(blocks[0][0].file == "/src/main.swift")
    #expect(blocks[0][0].line == 3)
    #expect(blocks[0][0].column == 5)
    #expect(blocks[0][1].line == 7)
    #expect(blocks[0][1].column == nil)
    #expect(blocks[1] == [SymbolizerOutput.Entry()])
    #expect(blocks[2][0].function == "malloc")
    #expect(blocks[2][0].file == nil)  // line 0: the file name would mislead
  }

  @Test("frames demangle Swift names and mark inlined ones")
  func framesFromAnswer() {
    let base = SymbolizedFrame(pc: 0x1001, modulePath: "/bin/t", moduleAddress: 0x1001)
    let answer = SymbolizerOutput.parse(
      "$s1t4leafySaySiGSiF\n/t.swift:1:0\n$s1t3midyS2iF\n/t.swift:2:3\n\n")
    let frames = Symbolizer.frames(base: base, answer: answer[0])
    #expect(
      frames.map(\.displayName) == [
        "t.leaf(Swift.Int) -> Swift.Array<Swift.Int>", "t.mid(Swift.Int) -> Swift.Int",
      ])
    #expect(frames.map(\.isInlined) == [true, false])
    #expect(frames[1].sourceLocation == "/t.swift:2")
  }

  @Test("Swift names demangle in process; others are left alone")
  func demangles() {
    #expect(SwiftDemangler.demangle("$s1t3midyS2iF") == "t.mid(Swift.Int) -> Swift.Int")
    #expect(SwiftDemangler.demangle("malloc") == nil)
    #expect(SwiftDemangler.demangleIfSwift("_ZN3foo3barEv") == "_ZN3foo3barEv")
  }

  @Test("without a symbolizer, frames fall back to module+offset or the bare address")
  func fallsBack() {
    let symbols = Symbolizer(toolPath: nil).symbolize(
      [0x7F00_0000_01F0, 0x1234], modules: [Self.module])
    #expect(symbols[0x7F00_0000_01F0]?.map(\.displayName) == ["libdemo.so+0x1f0"])
    #expect(symbols[0x1234]?.map(\.displayName) == ["0x1234"])
  }

  @Test("HEAPLINE_SYMBOLIZER chooses the tool, and empty turns it off")
  func locates() {
    #expect(Symbolizer.locateTool(environment: ["HEAPLINE_SYMBOLIZER": ""]) == nil)
    #expect(Symbolizer.locateTool(environment: ["HEAPLINE_SYMBOLIZER": "/bin/sh"]) == "/bin/sh")
    #expect(Symbolizer.locateTool(environment: ["PATH": "/nonexistent"]) == nil)
  }

  @Test(
    "llvm-symbolizer resolves a function of this test binary, and survives missing modules",
    .enabled(if: Symbolizer.locateTool() != nil))
  func symbolizesLive() throws {
    // Given the module map of this process and the address of a function with debug info
    let target: @convention(c) () -> Int32 = symbolizationTarget
    let address = UInt64(UInt(bitPattern: unsafeBitCast(target, to: Int.self)))
    let executable = try #require(
      try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    let bias = try Self.loadBias(of: executable)
    let own = TraceModule(
      path: executable, loadBias: bias, segments: [.init(start: 0, size: 1 << 40)])
    // When it is symbolized as a return address just past the function's entry
    let symbols = Symbolizer().symbolize(
      [address + 1, 0x7F00_0000_01F0], modules: [Self.module, own])
    // Then the function is found (its C entry is a thunk without a source line), and the
    // missing module falls back
    let frame = try #require(symbols[address + 1]?.last)
    #expect(frame.function == "heapline_symbolization_target")
    #expect(frame.file == nil)
    #expect(frame.moduleAddress == address + 1 - bias)
    #expect(symbols[0x7F00_0000_01F0]?.map(\.displayName) == ["libdemo.so+0x1f0"])
  }

  /// The load bias of `path` in this process: its first mapping for a PIE, 0 otherwise.
  private static func loadBias(of path: String) throws -> UInt64 {
    let elf = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
    guard elf.count > 17, elf[16] == 3 else { return 0 }  // e_type ET_DYN
    let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
    for line in maps.split(separator: "\n") where line.hasSuffix(path) {
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      guard fields.count >= 3, UInt64(fields[2], radix: 16) == 0 else { continue }
      let start = fields[0].split(separator: "-")[0]
      return UInt64(start, radix: 16) ?? 0
    }
    return 0
  }
}
