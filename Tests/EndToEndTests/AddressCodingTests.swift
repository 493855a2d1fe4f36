import Foundation
import HeaplineTrace
import Testing

/// A version 5 ALLOC names its address by a code against a model of the allocator, which the
/// shim and the reader keep alike: every address the reader makes of it must be the one malloc
/// returned, whatever mix of calls the program makes.
@Suite struct AddressCodingTests {
  @Test func everyAddressReadBackIsTheOneMallocReturned() throws {
    // Given a program that makes a pseudo-random mix of mallocs, frees, reallocs, callocs and
    // aligned blocks, small and large, and prints each allocation's address and size
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("addresses", in: dir)
    let trace = dir.appendingPathComponent("addresses.trace")
    let result = try Harness.heapline(
      ["record", "--no-symbols", "--no-leaks", "-o", trace.path, "--", program, "20000"])
    #expect(result.status == 0, "\(result.stderr)")
    var lines = result.stdout.split(separator: "\n")
    let frees = try #require(lines.popLast().flatMap { Int($0.dropFirst("frees ".count)) })
    let made: [(address: UInt64, size: UInt64)] = try lines.map {
      let fields = $0.split(separator: " ")
      return (try #require(UInt64(fields[1], radix: 16)), try #require(UInt64(fields[2])))
    }
    #expect(made.count > 10_000)
    // When the trace's allocations of the program's thread are read in its order
    var allocations: [AllocationEvent] = []
    var freed: [AllocID] = []
    var events = try TraceReader(path: trace.path).events()
    while let event = try events.next() {
      switch event {
      case .alloc(let block) where block.threadSerial == 1: allocations.append(block)
      case .free(let free) where free.threadSerial == 1: freed.append(free.id)
      default: break
      }
    }
    // Then from the mix's first allocation on, each has the address and size the program saw
    let start = try #require(
      allocations.firstIndex {
        $0.address.rawValue == made[0].address && $0.size == made[0].size
      })
    let read = allocations[start...].prefix(made.count)
    #expect(read.count == made.count)
    for (index, (block, truth)) in zip(read, made).enumerated()
    where block.address.rawValue != truth.address || block.size != truth.size {
      let read = String(block.address.rawValue, radix: 16)
      let given = String(truth.address, radix: 16)
      Issue.record(
        Comment(
          rawValue: "allocation \(index): read 0x\(read) of \(block.size) B, malloc gave"
            + " 0x\(given) of \(truth.size) B"))
      break
    }
    // And every free of the mix names one of its blocks
    let ids = Set(read.map(\.id))
    #expect(freed.filter { ids.contains($0) }.count == frees)
  }
}

/// A free names its block by id, and a free of another thread's block is stamped to the grain:
/// merged by time, it never comes before the ALLOC it names, however the threads interleave.
@Suite struct CrossThreadFreeTests {
  @Test func blocksFreedByAnotherThreadAreAllMatched() throws {
    // Given a producer thread that makes 200,000 blocks of 48 bytes and a consumer thread that
    // frees each as soon as it takes it from a queue of 64
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("handoff", in: dir)
    let trace = dir.appendingPathComponent("handoff.trace")
    let result = try Harness.heapline(
      ["record", "--no-symbols", "--no-leaks", "-o", trace.path, "--", program, "200000"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "handed 200000\n")
    // When it is read in time order, every free finds its block, and none is left live
    var events = try TraceReader(path: trace.path).events()
    var made: Set<AllocID> = []
    var live: Set<AllocID> = []
    var early: Set<AllocID> = []  // freed before their ALLOC came
    var freedByOther = 0
    while let event = try events.next() {
      switch event {
      case .alloc(let block) where block.size == 48 && block.threadSerial == 1:
        made.insert(block.id)
        live.insert(block.id)
      case .free(let free) where free.id.threadSerial == 1:
        if live.remove(free.id) == nil {
          early.insert(free.id)
        } else if free.threadSerial != 1 {
          freedByOther += 1
        }
      default: break
      }
    }
    #expect(made.count == 200_000)
    #expect(freedByOther == 200_000)
    #expect(early.intersection(made).isEmpty)
    #expect(live.isEmpty)
  }
}
