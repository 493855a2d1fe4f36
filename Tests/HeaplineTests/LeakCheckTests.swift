import Dispatch
import Foundation
import Glibc
import Heapline
import HeaplineAnalysis
import Testing

/// A store that calls back whoever binds to it: 240 bytes, the 16-byte header, the callback,
/// an attachment and 25 words of state.
///
/// The sizes of these classes are unusual on purpose. A conservative scan takes any word that
/// holds a block's address for a pointer to it, and stale words are everywhere (the unused slots
/// of stack frames, the dead async frames of Swift Testing's tasks): at a size that the process
/// used before, a leaked object may land where an old one lay that such a word still names.
final class LeakyStore {
  var onChange: (() -> Void)?
  var attachment: Attachment?
  var state = Padding25()
}

/// What a store may hold: 144 bytes, the header and 16 words.
final class Attachment {
  var state = Padding16()
}

/// The usual Swift leak: the controller owns the store, and the store's callback captures the
/// controller. Instances are 200 bytes: the header, the store, a String and 20 words. The
/// callback captures a String and 16 words too, so that its context is an object of its own
/// (a closure that captures one reference only uses it as its context): 168 bytes, the header,
/// the controller, the String and the words.
final class LeakyController {
  let store = LeakyStore()
  var title = ""
  var state = Padding20()

  func bindStrongly(suffix: String = "!") {
    let extra = Padding16()
    store.onChange = { self.title = "changed" + suffix + String(extra.a) }
  }

  func bindWeakly(suffix: String = "!") {
    let extra = Padding16()
    store.onChange = { [weak self] in self?.title = "changed" + suffix + String(extra.a) }
  }
}

struct Padding16 { var a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0, i = 0, j = 0, k = 0, l = 0, m = 0, n = 0, o = 0, p = 0 }
struct Padding20 { var words = Padding16(), q = 0, r = 0, s = 0, t = 0 }
struct Padding25 { var words = Padding20(), u = 0, v = 0, w = 0, x = 0, y = 0 }

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

/// Ten leaked cycles, each holding an attachment. In a function of its own, so that its
/// locals are dead (below the caller's frame, which checkLeaks clears) when the check runs.
@inline(never) func leakTenControllers() {
  for _ in 0..<10 {
    let controller = LeakyController()
    controller.store.attachment = Attachment()
    controller.bindStrongly()
  }
}

/// Runs `work` on a new thread whose stack is fresh from mmap, and waits for it. A thread that
/// reuses the stack of one that exited finds its stale pointers in its frames' unused slots,
/// where they may point to new blocks at reused addresses and keep them from being reported.
func onFreshThread(_ work: @escaping () throws -> Void) throws {
  final class Job: @unchecked Sendable {
    let work: () throws -> Void
    var error: (any Error)?
    init(_ work: @escaping () throws -> Void) { self.work = work }
  }
  let size = 8 << 20
  let stack = try #require(
    mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0))
  defer { munmap(stack, size) }
  var attributes = pthread_attr_t()
  pthread_attr_init(&attributes)
  defer { pthread_attr_destroy(&attributes) }
  pthread_attr_setstack(&attributes, stack, size)
  let job = Job(work)
  var thread = pthread_t()
  let started = pthread_create(
    &thread, &attributes,
    { raw in
      let job = Unmanaged<Job>.fromOpaque(raw!).takeUnretainedValue()
      do { try job.work() } catch { job.error = error }
      return nil
    }, Unmanaged.passUnretained(job).toOpaque())
  try #require(started == 0)
  pthread_join(thread, nil)
  if let error = job.error { throw error }
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
    // 200 (controller) + 240 (store) + 168 (closure context)
    #expect(cycle.definitelyLost == LeakAmount(blocks: 3, bytes: 608))
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
    // Given ten leaked cycles, each also holding an attachment
    let error = #expect(throws: LeaksFound.self) {
      try Heapline.expectNoLeaks { leakTenControllers() }
    }
    // Then the report merges them into one group of ten leaks, the attachments indirectly lost
    let report = try #require(error?.report)
    let cycle = try #require(report.groups.first)
    #expect(report.groups.count == 1)
    #expect(cycle.instances == 10)
    #expect(cycle.definitelyLost == LeakAmount(blocks: 30, bytes: 6_080))
    #expect(cycle.indirectlyLost == LeakAmount(blocks: 10, bytes: 1_440))
    #expect(report.possiblyLost == LeakAmount())
  }

  @Test func checkLeaksWritesAScanThatTheRecordingReports() throws {
    // Given a recording in which a thread leaks ten cycles and, once it is gone, another checks
    var check: LeakCheck?
    let recording = try Heapline.record {
      try onFreshThread { leakTenControllers() }
      try onFreshThread { check = try Heapline.checkLeaks() }
    }
    // Then the check counts them, and the recording's report has them as one group
    let found = try #require(check)
    #expect(found.lostBlocks == 40)
    #expect(found.lostBytes == 6_080 + 1_440)
    #expect(found.possiblyLostBlocks == 0)
    let report = try recording.leaks()
    #expect(report.scan.id == found.scan)
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
