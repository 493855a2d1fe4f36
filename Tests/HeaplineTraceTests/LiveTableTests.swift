import HeaplineTrace
import Testing

@testable import HeaplineAnalysis

/// The analyses' table of live blocks against a dictionary that holds the same blocks.
@Suite struct LiveTableTests {
  @Test func insertsAndRemovesAgreeWithADictionaryThroughEveryGrowth() {
    // Given 200,000 allocations from 8 threads, each freed at random while the others come
    var rng = TraceDamageFuzzTests.Seeded(state: 42)
    var table = LiveTable<(size: UInt64, stack: UInt32)>()
    var model: [AllocID: (size: UInt64, stack: UInt32)] = [:]
    var pending: [AllocID] = []
    var counters = [UInt64](repeating: 0, count: 8)
    var most = 0
    for step in 0..<200_000 {
      let thread = Int(rng.next() % 8)
      counters[thread] += 1
      let id = AllocID(threadSerial: UInt32(thread + 1), counter: counters[thread])
      let payload = (size: UInt64(step % 4096), stack: UInt32(step % 97))
      // When each is inserted, and a random earlier one is removed half of the time
      #expect(table.insert(id, payload) == nil)
      model[id] = payload
      pending.append(id)
      most = max(most, model.count)
      if rng.next() % 2 == 0 {
        let victim = pending.swapAt(Int(rng.next() % UInt64(pending.count)))
        #expect(table.remove(victim)?.size == model.removeValue(forKey: victim)?.size)
      }
    }
    // Then the table holds exactly the model's blocks, and knows how many it held at most
    #expect(table.count == model.count)
    #expect(table.maxCount == most)
    #expect(table.values.map(\.size).sorted() == model.values.map(\.size).sorted())
    for id in pending { #expect(table.remove(id)?.stack == model[id]?.stack) }
    #expect(table.count == 0)
  }

  @Test func aGrowingHashTableStaysBetweenSevenTenthsAndSevenEighthsFull() {
    // Given 1,000,000 blocks allocated by 3 threads in turn, none freed, as a pass meets them
    var table = LiveHashTable<(size: UInt64, stack: UInt32)>()
    for counter in 1...333_334 as ClosedRange<UInt64> {
      for thread in 1...3 as ClosedRange<UInt32> {
        guard table.count < 1_000_000 else { break }
        #expect(table.insert(AllocID(threadSerial: thread, counter: counter), (counter, 0)) == nil)
        // Then, past the first growths of its 64 segments, it is never over 7/8 full
        #expect(table.count * 8 <= table.slotCount * 7 || table.count < 64 * 16 * 7 / 8)
      }
    }
    // And at the end at least 7/10 full: 1.43 slots a block at most, of 24 bytes here
    #expect(table.count == 1_000_000)
    #expect(table.slotCount * 7 <= table.count * 10 + 64 * 16 * 7)
    #expect(table.slotCount * 8 >= table.count * 7 + 8)
  }

  @Test func aLiveIdGivesBackItsOldBlockAndAnUnknownIdNothing() {
    var table = LiveTable<UInt64>()
    let id = AllocID(threadSerial: 1, counter: 7)
    #expect(table.insert(id, 10) == nil)
    #expect(table.insert(id, 20) == 10)
    #expect(table.count == 1)
    #expect(table.remove(AllocID(threadSerial: 1, counter: 8)) == nil)
    #expect(table.remove(id) == 20)
    #expect(table.remove(id) == nil)
  }

  @Test(arguments: [
    AllocID(threadSerial: (1 << 24) - 1, counter: 1), AllocID(threadSerial: 1, counter: 1 << 40),
    AllocID(threadSerial: .max, counter: .max), AllocID(threadSerial: 0, counter: 0),
  ])
  func idsOfADamagedTraceThatDoNotPackStillWork(id: AllocID) {
    var table = LiveTable<UInt64>()
    #expect(table.insert(id, 5) == nil)
    #expect(table.insert(AllocID(threadSerial: 2, counter: 3), 6) == nil)
    #expect(table.count == 2)
    #expect(table.values.sorted() == [5, 6])
    #expect(table.remove(id) == 5)
    #expect(table.count == 1)
  }

  @Test func aPageThatFallsToAQuarterFullGivesItsBlocksToTheHashTable() {
    // Given 10 pages' worth of one thread's blocks, all in pages
    var table = LiveTable<UInt32>()
    for counter in 0..<2560 as Range<UInt64> {
      #expect(table.insert(AllocID(threadSerial: 1, counter: counter), UInt32(counter)) == nil)
    }
    #expect(table.scatteredCount == 0)
    // When the first 9 pages keep 1 block in 8, and the last (the newest) keeps 1 in 256
    for counter in 0..<2560 as Range<UInt64> where counter % (counter < 2304 ? 8 : 256) != 0 {
      #expect(table.remove(AllocID(threadSerial: 1, counter: counter)) == UInt32(counter))
    }
    // Then the 9 old pages' 32 blocks each went to the hash table, the newest page kept its one
    #expect(table.count == 9 * 32 + 1)
    #expect(table.scatteredCount == 9 * 32)
    #expect(table.values.sorted() == (0..<2560).filter { $0 % ($0 < 2304 ? 8 : 256) == 0 }.map(UInt32.init))
    // And every block is still found by its id
    #expect(table.remove(AllocID(threadSerial: 1, counter: 8)) == 8)
    #expect(table.remove(AllocID(threadSerial: 1, counter: 2304)) == 2304)
    // And when the thread moves on to a new page, the sparse newest one goes too
    #expect(table.insert(AllocID(threadSerial: 1, counter: 9000), 9000) == nil)
    #expect(table.scatteredCount == 9 * 32 - 1)
    #expect(table.count == 9 * 32)
  }

  @Test func aThreadWhoseCountStartsPastABillionKeepsItsBlocksInPages() {
    // Given a rotated trace's file, where a thread's counters go on from 2^31
    var table = LiveTable<UInt32>()
    for counter in 0..<100_000 as Range<UInt64> {
      #expect(table.insert(AllocID(threadSerial: 3, counter: (1 << 31) + counter), 7) == nil)
    }
    // Then its blocks are in pages, as they would be from 0, in 4 bytes and a bit each
    #expect(table.scatteredCount == 0)
    #expect(table.byteCount <= 5 * 100_000 + 65536, "\(table.byteCount) B")
    // And a block carried over from before the first page still has a place, in the hash table
    #expect(table.insert(AllocID(threadSerial: 3, counter: 5), 8) == nil)
    #expect(table.scatteredCount == 1)
    #expect(table.remove(AllocID(threadSerial: 3, counter: 5)) == 8)
    #expect(table.remove(AllocID(threadSerial: 3, counter: (1 << 31) + 99_999)) == 7)
  }

  @Test(arguments: [1, 2, 3, 4, 5, 8, 64, 256, 1000])
  func memoryStaysInProportionToTheLiveBlocksWhicheverOnesAreKept(keepingOneIn stride: Int) {
    // Given 1,000,000 allocations by 2 threads in turn, of which 1 in `stride` stays live
    var table = LiveTable<Int32>()
    var live = 0
    for step in 0..<1_000_000 {
      let id = AllocID(threadSerial: UInt32(step % 2 + 1), counter: UInt64(step / 2))
      _ = table.insert(id, Int32(step % 1000))
      if (step / 2) % stride != 0 {
        _ = table.remove(id)
      } else {
        live += 1
      }
    }
    // Then the table holds them all in at most 24 bytes each, besides a fixed 64 KiB
    #expect(table.count == live)
    #expect(table.byteCount <= 24 * live + 65536, "\(table.byteCount) B for \(live) blocks")
  }
}

extension Array {
  /// Removes the element at `index` by moving the last one there, and returns it.
  fileprivate mutating func swapAt(_ index: Int) -> Element {
    swapAt(index, count - 1)
    return removeLast()
  }
}
