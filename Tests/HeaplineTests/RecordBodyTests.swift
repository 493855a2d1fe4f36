import Heapline
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A class whose instances are exactly 48 bytes: the 16-byte object header and four Ints. Only
/// these tests make them, so their category holds nothing else.
final class Gadget {
  var a = 1, b = 2, c = 3, d = 4
}

struct BodyFailure: Error {}

/// Makes `count` Gadgets in an async function, which its caller awaits.
func makeGadgets(_ count: Int) async -> [Gadget] {
  await Task.yield()
  return (0..<count).map { _ in Gadget() }
}

/// What `body` did: returned, or threw.
func outcome<T>(_ body: () async throws -> T) async -> Result<Void, any Error> {
  do {
    _ = try await body()
    return .success(())
  } catch {
    return .failure(error)
  }
}

func isAlreadyRecording(_ error: any Error) -> Bool {
  if case HeaplineError.alreadyRecording = error { return true }
  return false
}

/// `Heapline.record` with bodies that return a value, throw, or are `async`.
@Suite(.serialized) struct RecordBodyTests {
  @Test func aBodysValueComesBackWithTheRecording() throws {
    // Given a body that makes and returns 200 Gadgets
    let (gadgets, recording) = try Heapline.record { (0..<200).map { _ in Gadget() } }
    // Then the caller has them, and the recording has them live at the end, 48 bytes each
    #expect(gadgets.count == 200)
    let category = try #require(recording.statistics.category(named: "HeaplineTests.Gadget"))
    #expect(category.persistentCount == 200)
    #expect(category.persistentBytes == 9_600)
    #expect(category.transientCount == 0)
  }

  @Test func aThrowingBodysErrorComesOutAndTheNextRecordingRuns() throws {
    #expect(throws: BodyFailure.self) {
      let _: (value: Int, recording: Recording) = try Heapline.record { throw BodyFailure() }
    }
    let (gadgets, recording) = try Heapline.record { (0..<7).map { _ in Gadget() } }
    #expect(gadgets.count == 7)
    #expect(recording.statistics.category(named: "HeaplineTests.Gadget")?.persistentCount == 7)
  }

  @Test func anAsyncBodyIsRecordedAcrossItsSuspensionsAndChildTasks() async throws {
    // Given an async body that makes 100 Gadgets itself, after a suspension, and 2 × 150 in
    // child tasks, which run on other threads of the pool
    let (gadgets, recording) = try await Heapline.record {
      await Task.yield()
      async let first = makeGadgets(150)
      async let second = makeGadgets(150)
      let own = await makeGadgets(100)
      return own + (await first) + (await second)
    }
    // Then all 400 are in the recording, live at its end
    #expect(gadgets.count == 400)
    let category = try #require(recording.statistics.category(named: "HeaplineTests.Gadget"))
    #expect(category.persistentCount == 400)
    #expect(category.persistentBytes == 19_200)
  }

  @Test func aNestedRecordFailsInsideAnAsyncBodyAndItsChildTasks() async throws {
    // Given nested calls after a suspension, and from a child task
    let (nested, _) = try await Heapline.record {
      await Task.yield()
      let direct = await outcome { try await Heapline.record { 1 } }
      async let child = outcome { try await Heapline.record { 2 } }
      let synchronous = Result { _ = try Heapline.record {} }
      return [direct, await child, synchronous]
    }
    // Then each failed at once with alreadyRecording, rather than wait for its own turn
    #expect(nested.count == 3)
    for result in nested {
      #expect(throws: HeaplineError.self) { try result.get() }
      if case .failure(let error) = result { #expect(isAlreadyRecording(error)) }
    }
  }

  @Test func concurrentAsyncRecordingsTakeTurnsAndEachSeesItsOwnScope() async throws {
    // Given 6 tasks that record at once, task i making i + 1 blocks of 32 bytes in a scope
    let counts = try await withThrowingTaskGroup(of: (Int, UInt64?).self) { group in
      for i in 0..<6 {
        group.addTask {
          // A plain buffer, made outside the scope: only the blocks themselves are in it
          let name = "Turn \(i)"
          let blocks = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: i + 1)
          defer { blocks.deallocate() }
          let (_, recording) = try await Heapline.record {
            await Task.yield()
            Heapline.category(name) {
              var j = 0
              while j <= i {
                blocks[j] = malloc(32)
                j += 1
              }
            }
          }
          for j in 0...i { free(blocks[j]) }
          return (i, recording.statistics.category(named: name)?.persistentCount)
        }
      }
      var counts: [Int: UInt64] = [:]
      for try await (i, count) in group { counts[i] = count }
      return counts
    }
    // Then each recording ran whole, one after another, with exactly its own blocks
    #expect(counts == [0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6])
  }
}
