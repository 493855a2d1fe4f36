import Dispatch
import Foundation
import Heapline
import HeaplineAnalysis
import Testing

/// A store that calls back whoever binds to it.
final class LeakyStore {
  var onChange: (() -> Void)?
  var values: [Int] = []
}

/// The usual Swift leak: the controller owns the store, and the store's callback captures the
/// controller. Instances are 40 bytes: the 16-byte header, the store and a String. The
/// callbacks capture a String too, so that their context is an object of its own (a closure
/// that captures one reference only uses it as its context): 40 bytes, the header, the
/// controller and the String.
final class LeakyController {
  let store = LeakyStore()
  var title = ""

  func bindStrongly(suffix: String = "!") {
    store.onChange = { self.title = "changed" + suffix }
  }

  func bindWeakly(suffix: String = "!") {
    store.onChange = { [weak self] in self?.title = "changed" + suffix }
  }
}

/// A dictionary that dispatch queues fill together.
final class Squares: @unchecked Sendable {
  private let lock = NSLock()
  private var values: [Int: Int] = [:]

  func set(_ key: Int, _ value: Int) {
    lock.lock()
    values[key] = value
    lock.unlock()
  }

  var count: Int {
    lock.lock()
    defer { lock.unlock() }
    return values.count
  }
}

/// Ten leaked cycles, each holding an array of 100 Ints. In a function of its own, so that its
/// locals are dead (below the caller's frame, which checkLeaks clears) when the check runs.
@inline(never) func leakTenControllers() {
  for _ in 0..<10 {
    let controller = LeakyController()
    controller.store.values = Array(repeating: 7, count: 100)
    controller.bindStrongly()
  }
}

/// A check made on another thread, and its end.
final class LeakCheckResult: @unchecked Sendable {
  var check: LeakCheck?
  let done = DispatchSemaphore(value: 0)
}

/// In-process leak checks: Heapline.expectNoLeaks and checkLeaks on objects whose layout the
/// tests know. Serialized: a test that leaks on purpose must not run beside one that expects
/// no leak.
@Suite(.serialized) struct LeakCheckTests {
  @Test func aClosureCapturingSelfStronglyIsALeakedCycleNamedByItsClasses() throws {
    // Given a controller whose store's callback captures it strongly, made and dropped
    let error = #expect(throws: LeaksFound.self) {
      try Heapline.expectNoLeaks { LeakyController().bindStrongly() }
    }
    // Then the one leak is the cycle controller → store → closure context → controller
    let report = try #require(error?.report)
    #expect(report.groups.count == 1)
    let cycle = try #require(report.groups.first)
    #expect(cycle.kind == .cycle)
    #expect(cycle.name == "LeakyController → LeakyStore → closure context → LeakyController")
    #expect(cycle.instances == 1)
    // 40 (controller) + 40 (store: header, callback, array) + 40 (context: header, self, suffix)
    #expect(cycle.definitelyLost == LeakAmount(blocks: 3, bytes: 120))
    #expect(cycle.indirectlyLost == LeakAmount())
    #expect(report.possiblyLost == LeakAmount())
    // And the message names the cycle and where its blocks were allocated
    let message = try #require(error?.description)
    #expect(message.contains("Leaked cycle: LeakyController → LeakyStore → closure context"))
    #expect(message.contains("LeakCheckTests.swift"))
  }

  @Test func aClosureCapturingSelfWeaklyLeaksNothing() throws {
    try Heapline.expectNoLeaks { LeakyController().bindWeakly() }
  }

  @Test func identicalLeakedCyclesMergeIntoOneGroupWithWhatTheyHold() throws {
    // Given ten leaked cycles, each also holding an array of 100 Ints
    let error = #expect(throws: LeaksFound.self) {
      try Heapline.expectNoLeaks { leakTenControllers() }
    }
    // Then the report merges them into one group of ten leaks, the arrays indirectly lost
    let report = try #require(error?.report)
    let cycle = try #require(report.groups.first)
    #expect(report.groups.count == 1)
    #expect(cycle.instances == 10)
    #expect(cycle.definitelyLost == LeakAmount(blocks: 30, bytes: 1_200))
    // An array of 100 Ints: 32 bytes of header and count, then 800 bytes of elements
    #expect(cycle.indirectlyLost == LeakAmount(blocks: 10, bytes: 8_320))
    #expect(report.possiblyLost == LeakAmount())
  }

  @Test func checkLeaksWritesAScanThatTheRecordingReports() throws {
    // Given a recording that leaks ten cycles on a thread and checks for leaks there
    let result = LeakCheckResult()
    let recording = try Heapline.record {
      let thread = Thread {
        leakTenControllers()
        result.check = try? Heapline.checkLeaks()
        result.done.signal()
      }
      thread.start()
      result.done.wait()
    }
    // Then the check counts them, and the recording's report has them as one group
    let check = try #require(result.check)
    #expect(check.lostBlocks == 40)
    #expect(check.lostBytes == 1_200 + 8_320)
    #expect(check.possiblyLostBlocks == 0)
    let report = try recording.leaks()
    #expect(report.scan.id == check.scan)
    #expect(report.scan.trigger == .api)
    #expect(report.groups.map(\.instances) == [10])
  }

  @Test func checkingWithoutARecordingThrows() {
    #expect(throws: HeaplineError.self) { try Heapline.checkLeaks() }
  }

  @Test func foundationAndDispatchLeakNothing() throws {
    var decodedCount = 0, squareCount = 0
    var date = ""
    try Heapline.expectNoLeaks {
      let items = (0..<200).map { ["name": "item \($0)", "tag": String(repeating: "x", count: $0)] }
      let data = try JSONSerialization.data(withJSONObject: items)
      decodedCount = (try JSONSerialization.jsonObject(with: data) as? [[String: String]])?.count ?? 0
      let formatter = DateFormatter()
      formatter.dateFormat = "yyyy-MM-dd HH:mm"
      date = formatter.string(from: Date(timeIntervalSince1970: 0))
      let group = DispatchGroup()
      let queue = DispatchQueue(label: "leak-check", attributes: .concurrent)
      let squares = Squares()
      for i in 0..<100 {
        queue.async(group: group) { squares.set(i, i * i) }
      }
      group.wait()
      squareCount = squares.count
      _ = URL(fileURLWithPath: "/tmp/a/b.txt").lastPathComponent
    }
    #expect(decodedCount == 200)
    #expect(date.hasPrefix("1970"))
    #expect(squareCount == 100)
  }
}
