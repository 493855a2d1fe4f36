// The in-process leak API (Heapline.expectNoLeaks, Heapline.checkLeaks, Recording.leaks) on
// objects whose sizes the end-to-end tests know, in a process of its own: a test process runs
// other tests meanwhile, whose threads and data hold words that may equal a leaked object's
// address, and a conservative scan takes those for pointers. One line per case:
//   <case>: <kind> <name> | instances N | definitely B/b | indirectly B/b | possibly B/b
// `heapline-api-fixture CASE...` runs the cases named (strong, weak, ten, elsewhere, mixed,
// check, unrecorded, interior, cached, async, growth, mainactor), each once; with none, all of
// them. The tests run each case in a process of its own: a report symbolizes its stacks with a
// child process, and Foundation's Process starts a thread that stays, whose stack holds stale
// words that may point into a later case's blocks.
import Dispatch
import Foundation
import Heapline
import HeaplineAnalysis

#if canImport(Glibc)
  import Glibc
#endif

struct Words16 {
  var a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0, i = 0, j = 0, k = 0, l = 0, m = 0,
    n = 0, o = 0, p = 0
}
struct Words20 { var words = Words16(), q = 0, r = 0, s = 0, t = 0 }
struct Words25 { var words = Words20(), u = 0, v = 0, w = 0, x = 0, y = 0 }

/// 240 bytes: the 16-byte header, the callback, an attachment and 25 words.
final class LeakyStore {
  var onChange: (() -> Void)?
  var attachment: Attachment?
  var state = Words25()
}

/// 144 bytes: the header and 16 words.
final class Attachment {
  var state = Words16()
}

/// 200 bytes: the header, the store, a String and 20 words. Its callbacks capture it, a String
/// and 16 words: their context is 168 bytes.
final class LeakyController {
  let store = LeakyStore()
  var title = ""
  var state = Words20()

  func bindStrongly(suffix: String = "!") {
    let extra = Words16()
    store.onChange = { self.title = "changed" + suffix + String(extra.a) }
  }

  func bindWeakly(suffix: String = "!") {
    let extra = Words16()
    store.onChange = { [weak self] in self?.title = "changed" + suffix + String(extra.a) }
  }
}

@inline(never) func leakTenControllers() {
  for _ in 0..<10 {
    let controller = LeakyController()
    controller.store.attachment = Attachment()
    controller.bindStrongly()
  }
}

func amount(_ a: LeakAmount) -> String { "\(a.bytes)/\(a.blocks)" }

func describe(_ report: LeakReport) -> String {
  if report.groups.isEmpty { return "clean" }
  return report.groups.map { group in
    "\(group.kind.rawValue) \(group.name) | instances \(group.instances) | definitely "
      + "\(amount(group.definitelyLost)) | indirectly \(amount(group.indirectlyLost)) | "
      + "possibly \(amount(group.possiblyLost))"
  }.joined(separator: " ; ")
}

func expectNoLeaks(
  _ name: String, liveBytesAtMost limit: UInt64? = nil, _ body: () throws -> Void
) {
  do {
    try Heapline.expectNoLeaks(liveBytesAtMost: limit, body)
    print("\(name): clean")
  } catch let found as LeaksFound {
    print("\(name): \(describe(found.report))")
    if name == "strong" {
      // The message that a failing test shows: the cycle and where its blocks were allocated.
      let message = found.description
      print(
        "message names the cycle: \(message.contains("Leaked cycle: LeakyController → LeakyStore → closure context → LeakyController"))"
      )
      print("message names the allocating function: \(message.contains("bindStrongly"))")
      // Its stacks hold the user's frames only: no allocator, thunk or Heapline frame.
      let frames = message.split(separator: "\n").filter { $0.hasPrefix("      #") }
      print(
        "message frames: \(frames.count), in main.swift: \(frames.filter { $0.contains("main.swift:") }.count)"
      )
    }
  } catch {
    print("\(name): error \(error)")
  }
}

/// Runs `work` on a new thread with a fresh stack, and waits for it.
func onFreshThread(_ work: @escaping () -> Void) {
  final class Job {
    let work: () -> Void
    init(_ work: @escaping () -> Void) { self.work = work }
  }
  let size = 8 << 20
  let stack = mmap(
    nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)!
  defer { munmap(stack, size) }
  var attributes = pthread_attr_t()
  pthread_attr_init(&attributes)
  pthread_attr_setstack(&attributes, stack, size)
  var thread = pthread_t()
  let job = Unmanaged.passRetained(Job(work))
  pthread_create(
    &thread, &attributes,
    { raw in
      Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue().work()
      return nil
    }, job.toOpaque())
  pthread_join(thread, nil)
  pthread_attr_destroy(&attributes)
}

let cases = CommandLine.arguments.dropFirst()
func runs(_ name: String) -> Bool { cases.isEmpty || cases.contains(name) }

if runs("strong") { expectNoLeaks("strong") { LeakyController().bindStrongly() } }
if runs("weak") { expectNoLeaks("weak") { LeakyController().bindWeakly() } }
if runs("ten") { expectNoLeaks("ten") { leakTenControllers() } }
// Leaks made only on other threads are not the body's (other tests run there)...
if runs("elsewhere") { expectNoLeaks("elsewhere") { onFreshThread { leakTenControllers() } } }
// ...but a block from another thread that hangs from the body's leak is part of that leak
if runs("mixed") {
  expectNoLeaks("mixed") {
    var attachment: Attachment?
    onFreshThread { attachment = Attachment() }
    let controller = LeakyController()
    controller.store.attachment = attachment
    controller.bindStrongly()
  }
}

// Heapline.checkLeaks inside a recording, from a thread other than the one that leaked.
nonisolated(unsafe) var check: LeakCheck?
if runs("check") {
  do {
    let recording = try Heapline.record {
      onFreshThread { leakTenControllers() }
      onFreshThread { check = try? Heapline.checkLeaks() }
    }
    let report = try recording.leaks()
    if let check {
      let lost = LeakAmount(blocks: check.lostBlocks, bytes: check.lostBytes)
      let possibly = LeakAmount(blocks: check.possiblyLostBlocks, bytes: check.possiblyLostBytes)
      print("check: scan \(check.scan) lost \(amount(lost)) possibly \(amount(possibly))")
    }
    print("recording: scan \(report.scan.id) \(report.scan.trigger) \(describe(report))")
  } catch {
    print("recording: error \(error)")
  }
}

// Heapline.checkLeaks with no recording running: an error, not a scan. Here, in a process of its
// own, no other test can be recording meanwhile.
if runs("unrecorded") {
  do {
    let check = try Heapline.checkLeaks()
    print("unrecorded: scanned \(check.scan)")
  } catch {
    print("unrecorded: \(error)")
  }
}

// A block held only through a pointer into its middle: possibly lost. expectNoLeaks passes it, as
// `heapline leaks` does, and fails on it with failOn: .possibly.
nonisolated(unsafe) var interior: UnsafeMutableRawPointer?
if runs("interior") {
  for level in [LeakReport.Failure.definitely, .possibly] {
    do {
      try Heapline.expectNoLeaks(failOn: level) { interior = malloc(64)! + 8 }
      print("interior, failing on \(level): passed")
    } catch let found as LeaksFound {
      print("interior, failing on \(level): \(describe(found.report))")
    } catch {
      print("interior, failing on \(level): error \(error)")
    }
  }
}

// Caches made before the recording, in blocks it never saw, that keep blocks made during it: one
// in the main heap, and one in another thread's arena, whose heap the kernel merged with a
// mapping of its kind just below it (as it merges an arena's heap with the one before it, when
// that one filled its 64 MiB). Nothing is lost. (CoreFoundation's locale cache is such a cache.)
nonisolated(unsafe) var mainCache: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
nonisolated(unsafe) var threadCache: UnsafeMutablePointer<UnsafeMutableRawPointer?>?

/// The start of the mapping that holds `address`, from /proc/self/maps.
func mappingStart(of address: UInt) -> UInt? {
  // Read to the end: Foundation reads a file that stat calls empty, as /proc's are, with one
  // read(2), which stops at a page of whole lines.
  guard let handle = FileHandle(forReadingAtPath: "/proc/self/maps"),
    let data = try? handle.readToEnd()
  else { return nil }
  let maps = String(decoding: data, as: UTF8.self)
  for line in maps.split(separator: "\n") {
    let range = line.prefix { $0 != " " }.split(separator: "-").compactMap { UInt($0, radix: 16) }
    if range.count == 2, range[0] <= address, address < range[1] { return range[0] }
  }
  return nil
}

if runs("cached") {
  mainCache = malloc(48)!.bindMemory(to: UnsafeMutableRawPointer?.self, capacity: 6)
  var merged = false
  onFreshThread {
    threadCache = malloc(48)!.bindMemory(to: UnsafeMutableRawPointer?.self, capacity: 6)
    let heap = UInt(bitPattern: threadCache) & ~UInt((64 << 20) - 1)
    guard heap != 0, mappingStart(of: heap) == heap else { return }
    let below = UnsafeMutableRawPointer(bitPattern: heap - 65536)
    let fixedNoReplace: Int32 = 0x100000
    let made = mmap(
      below, 65536, PROT_READ | PROT_WRITE,
      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | fixedNoReplace, -1,
      0)
    merged = made == below && mappingStart(of: heap) == heap - 65536
  }
  print("cached: heap merged with the mapping below: \(merged)")
  expectNoLeaks("cached") {
    mainCache![0] = malloc(100)
    threadCache![0] = malloc(120)
  }
}

// The async leak check, which the Swift Testing trait runs: body and its child tasks run on one
// executor thread of their own. Run from a task, while the main thread waits.
func waitFor(_ work: @escaping @Sendable () async -> Void) {
  let done = DispatchSemaphore(value: 0)
  Task {
    await work()
    done.signal()
  }
  done.wait()
}

func expectNoLeaks(
  _ name: String, liveBytesAtMost limit: UInt64? = nil, _ body: () async throws -> Void
) async {
  do {
    try await Heapline.expectNoLeaks(liveBytesAtMost: limit, body)
    print("\(name): clean")
  } catch let found as LeaksFound {
    print("\(name): \(describe(found.report))")
  } catch {
    print("\(name): \(error)")
  }
}

/// Keeps what the growth cases make; a function, as code at the top level runs on the main
/// actor, which the body's thread is not.
enum Kept {
  nonisolated(unsafe) static var attachments: [Attachment] = []
}

@inline(never) func keepAttachments() {
  Kept.attachments = (0..<25).map { _ in Attachment() }
}

if runs("async") {
  waitFor {
    await expectNoLeaks("async strong") {
      await Task.yield()
      LeakyController().bindStrongly()
    }
    await expectNoLeaks("async weak") {
      await Task.yield()
      LeakyController().bindWeakly()
    }
    // A child task runs on the body's executor: its leaks are the body's. A detached task's
    // are not, as another thread's are not.
    await expectNoLeaks("async child") {
      async let child: Void = leakTenControllers()
      await Task.detached { leakTenControllers() }.value
      await child
    }
  }
}

// At most N bytes still live from the body: 25 attachments of 144 bytes, and the array of 232
// (a 32-byte header and 25 pointers) that keeps them. A first run (no limit) leaves the runtime's
// lazily made caches (type metadata, conformances) behind too: the runs after it are exact.
if runs("growth") {
  for limit: UInt64? in [nil, 3_832, 3_831] {
    expectNoLeaks("growth, at most \(limit.map(String.init) ?? "any")", liveBytesAtMost: limit) {
      keepAttachments()
    }
  }
  waitFor {
    for limit: UInt64? in [nil, 3_832, 3_831] {
      await expectNoLeaks(
        "async growth, at most \(limit.map(String.init) ?? "any")", liveBytesAtMost: limit
      ) {
        await Task.yield()
        keepAttachments()
      }
    }
    // A body that only sleeps keeps nothing: dispatch keeps the continuations of its timer
    // cached for the thread, which are dispatch's (after a first run, which leaves the queue
    // that the concurrency runtime makes for timers once behind too)
    for limit: UInt64? in [nil, 0, 0] {
      await expectNoLeaks(
        "async sleep, at most \(limit.map(String.init) ?? "any")", liveBytesAtMost: limit
      ) {
        try await Task.sleep(nanoseconds: 1_000)
      }
    }
  }
}

// The async check of a body isolated to the main actor (a `@MainActor` test): the body runs on
// the main thread, not on the check's executor, and its leaks are found all the same. Last: the
// main thread runs the main actor's queue, and the process ends from there.
/// As Swift Testing's trait calls the check for a `@MainActor` test: through a function that
/// hops to the main actor.
func expectNoLeaksOnMainActor(
  _ name: String, _ body: @escaping @Sendable @MainActor () async -> Void
)
  async
{
  await expectNoLeaks(name) { await body() }
}

/// A nonisolated body that only sleeps, while main-actor code leaks beside it.
func expectNoLeaksBesideTheMainActor(_ name: String) async {
  await expectNoLeaks(name) { try? await Task.sleep(nanoseconds: 200_000_000) }
}

if runs("mainactor") {
  Task { @MainActor in
    // Main-actor code that leaks while another body's check runs is not that body's: it was
    // charged with all that the main actor's thread made meanwhile (20 cycles)
    let beside = Task { @MainActor in
      for _ in 0..<20 {
        try? await Task.sleep(nanoseconds: 5_000_000)
        LeakyController().bindStrongly()
      }
    }
    await expectNoLeaksBesideTheMainActor("beside the main actor")
    await beside.value
    await expectNoLeaksOnMainActor("main actor") {
      LeakyController().bindStrongly()
    }
    await expectNoLeaksOnMainActor("main actor, after a suspension") {
      await Task.yield()
      LeakyController().bindStrongly()
    }
    await expectNoLeaksOnMainActor("main actor, weak") {
      LeakyController().bindWeakly()
    }
    exit(0)
  }
  dispatchMain()
}
