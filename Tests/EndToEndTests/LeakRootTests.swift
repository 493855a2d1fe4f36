import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// The leak scan's roots are memcheck's: a program's private writable mappings are roots, and
/// malloc's heaps and the blocks glibc maps whole are not (Fixtures/mappings.c).
@Suite struct LeakRootTests {
  @Test func privateMappingsAreRootsAndHeapsAndMappedBlocksAreNot() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("mappings", in: dir)
    let heapline = try Referees.heapline(
      program, [dir.appendingPathComponent("heapline.map").path], in: dir)
    let memcheck = try Referees.memcheck(program, [dir.appendingPathComponent("memcheck.map").path])
    // Ground truth: the 256 KiB block and the 3 + 3 blocks behind freed memory are lost, the
    // two blocks hanging from the big one indirectly; what the file's and the anonymous
    // mappings hold is reachable
    let definitely = LeakAmount(blocks: 7, bytes: 256 * 1024 + 3 * 200 + 3 * 216)
    let indirectly = LeakAmount(blocks: 2, bytes: 2 * 88)
    #expect(heapline.report.definitelyLost == definitely)
    #expect(heapline.report.indirectlyLost == indirectly)
    #expect(heapline.report.possiblyLost == LeakAmount())
    #expect(memcheck.definitelyLost == definitely)
    #expect(memcheck.indirectlyLost == indirectly)
    let groups = Dictionary(
      uniqueKeysWithValues: heapline.report.groups.map { ($0.name, $0.total) })
    #expect(
      groups == [
        "Malloc 256.00 KiB": LeakAmount(blocks: 3, bytes: 256 * 1024 + 2 * 88),
        "Malloc 208 Bytes": LeakAmount(blocks: 3, bytes: 3 * 200),
        "Malloc 224 Bytes": LeakAmount(blocks: 3, bytes: 3 * 216),
      ])
  }
}
