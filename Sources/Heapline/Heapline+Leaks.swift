import CHeapline
import HeaplineAnalysis
import HeaplineTrace

#if canImport(Glibc)
  import Glibc
#endif

/// What one leak scan found, in numbers; the trace holds the blocks themselves.
public struct LeakCheck: Hashable, Sendable {
  /// The scan's number in the trace: 1, 2, 3… (`heapline leaks --scan`).
  public var scan: UInt64
  /// Blocks that no path from the program's roots reaches.
  public var lostBlocks: UInt64
  public var lostBytes: UInt64
  /// Blocks reached only through pointers into their middle.
  public var possiblyLostBlocks: UInt64
  public var possiblyLostBytes: UInt64

  /// Whether nothing is lost, or possibly lost.
  public var isClean: Bool { lostBlocks == 0 && possiblyLostBlocks == 0 }
}

/// The error that ``Heapline/expectNoLeaks(depth:failOn:liveBytesAtMost:_:)-1rrga`` throws: the leak report, whose
/// description lists every group (a cycle by its categories) with its allocation stacks.
public struct LeaksFound: Error, CustomStringConvertible, Sendable {
  public let report: LeakReport

  public var description: String {
    let lost = report.definitelyLost.blocks + report.indirectlyLost.blocks
    return "leaks found: \(lost) blocks lost, \(report.possiblyLost.blocks) possibly lost\n"
      + LeakTextRenderer(style: Self.style).render(report)
  }

  /// User frames only: the allocator's entry frames, thunks, thread start, and Heapline's own
  /// frames (the closures that run `body` on its thread) are left out.
  static var style: FrameStyle {
    let directory = getcwd(nil, 0)
    defer { free(directory) }
    var style = FrameStyle(root: directory.map { String(cString: $0) })
    style.hiddenModules = ["Heapline", "HeaplineTesting", "Testing", "XCTest"]
    return style
  }
}

extension Heapline {
  /// Scans this process for leaks now, as `heapline_check_leaks()` does: the other threads stop
  /// for the length of the scan, and its result goes to the trace of the running recording.
  ///
  /// ```swift
  /// let recording = try Heapline.record {
  ///   openAndCloseTheEditor()
  ///   try Heapline.checkLeaks()
  /// }
  /// let report = try recording.leaks()  // the groups, their categories and stacks
  /// ```
  ///
  /// - Throws: ``HeaplineError/notRecording`` when nothing is recording.
  @discardableResult
  @_transparent  // inlined into the caller, with no frame of its own that stale pointers fill
  public static func checkLeaks() throws -> LeakCheck {
    // Functions the caller called before left copies of their pointers on the stack below its
    // frame, where this check's frames will go: zeroed first, so they hide no leak.
    heapline_clear_stack()
    return try scanForLeaks()
  }

  @usableFromInline
  static func scanForLeaks() throws -> LeakCheck {
    var summary = heapline_leak_summary()
    switch heapline_check_leaks(&summary) {
    case 0:
      return LeakCheck(
        scan: summary.scan, lostBlocks: summary.lost_blocks, lostBytes: summary.lost_bytes,
        possiblyLostBlocks: summary.possibly_lost_blocks,
        possiblyLostBytes: summary.possibly_lost_bytes)
    case EINVAL: throw HeaplineError.notRecording
    case let err: throw HeaplineError.io("scanning for leaks", err)
    }
  }

  /// Runs `body` in a recording, then scans for leaks, and throws ``LeaksFound`` when any block
  /// allocated meanwhile is lost or possibly lost. Works in Swift Testing and XCTest alike, as
  /// a thrown error fails the test:
  ///
  /// ```swift
  /// @Test func closingTheEditorLeaksNothing() throws {
  ///   try Heapline.expectNoLeaks {
  ///     let editor = Editor()
  ///     editor.open()
  ///     editor.close()
  ///   }
  /// }
  /// ```
  ///
  /// `body` runs on a thread of its own, which is gone (and its stack unmapped) when the check
  /// runs, on another: a thread's stack, and a task's async frames, hold stale copies of the
  /// pointers it used, which would hide leaks. The scan covers the whole process, but only the
  /// leaks that involve a block allocated on `body`'s thread fail the check (with what hangs
  /// from them, or holds them, on any thread): other tests that run at the same time in the
  /// process leak on their own threads. A leak made only by work that `body` dispatched to
  /// other threads is therefore not caught; ``checkLeaks()`` and ``Recording/leaks(scan:suppressions:symbolize:)``
  /// report everything.
  /// So `body` must not need the calling thread (the main actor, say), and Swift Testing's
  /// `#expect` inside it has no test to report to: check results after it returns. Objects
  /// `body` hands out (through a captured variable) are reachable, not lost. Recordings take
  /// turns, as ``record(to:depth:_:)->_``'s do.
  ///
  /// Like `heapline leaks`, it fails for definitely or indirectly lost blocks; possibly lost ones
  /// (reached only through a pointer into their middle) fail it only with `failOn: .possibly`.
  /// With `liveBytesAtMost`, it also throws ``LiveBytesOverLimit`` when the blocks that `body`'s
  /// thread allocated and never freed, leaked or not, hold more bytes than that.
  public static func expectNoLeaks(
    depth: Int = 64, failOn: LeakReport.Failure = .definitely, liveBytesAtMost: UInt64? = nil,
    _ body: () throws -> Void
  ) throws {
    let path = temporaryLeakTracePath()
    defer { unlink(path) }
    var check: LeakCheck?
    var bodyThread: UInt32 = 0
    _ = try record(to: path, depth: depth) {
      try onThreadOfItsOwn {
        bodyThread = currentThreadID()
        try body()
      }
      // From another new thread: a thread's own frames may keep copies of what it pointed to.
      try onThreadOfItsOwn { check = try checkLeaks() }
    }
    try judge(
      path: path, check: check, bodyThread: bodyThread, failOn: failOn,
      liveBytesAtMost: liveBytesAtMost)
  }

  /// The leak check of an `async` body, as the synchronous
  /// ``expectNoLeaks(depth:failOn:liveBytesAtMost:_:)-1rrga`` does it.
  ///
  /// `body` runs in a task of its own whose executor is a thread of its own, as do the child
  /// tasks it starts (they inherit the executor): what they allocate is `body`'s. So is what
  /// `body`'s own task allocates on other threads: a `body` isolated to the main actor (a
  /// `@MainActor` test) runs on the main actor's thread, beside other main-actor code, which is
  /// not `body`'s. Work on other executors (an actor
  /// with an executor of its own, `Task.detached`, a dispatch queue) is not `body`'s, as work
  /// on other threads is not in the synchronous check. Task-locals are inherited, so Swift
  /// Testing's `#expect` inside `body` reports to its test.
  public static func expectNoLeaks(
    depth: Int = 64, failOn: LeakReport.Failure = .definitely, liveBytesAtMost: UInt64? = nil,
    _ body: () async throws -> Void
  ) async throws {
    let path = temporaryLeakTracePath()
    defer { unlink(path) }
    var check: LeakCheck?
    var bodyThread: UInt32 = 0
    var elsewhere: Set<AllocID> = []
    _ = try await record(to: path, depth: depth) { () async throws -> Void in
      let executor = try ThreadExecutor()
      // A task of its own, whose async frames are freed when it ends: the frames of the
      // calling task would keep stale copies of body's pointers. Watched, for what it allocates
      // on other threads: the main actor's, when body is isolated to it.
      let outcome = await withoutActuallyEscaping(body) { body in
        let body = UncheckedSendable(body)
        return await Task(executorPreference: executor) {
          let watched = withUnsafeCurrentTask {
            $0.map { unsafeBitCast($0, to: UnsafeRawPointer.self) }
          }
          heapline_watch_task(watched)
          defer {
            mark(bodyEndMark)
            heapline_watch_task(nil)
          }
          try await body.value()
        }.result
      }
      executor.finish()
      bodyThread = executor.threadID
      elsewhere = watchedAllocations()
      try outcome.get()
      try onThreadOfItsOwn { check = try checkLeaks() }
    }
    try judge(
      path: path, check: check, bodyThread: bodyThread, elsewhere: elsewhere, failOn: failOn,
      liveBytesAtMost: liveBytesAtMost)
  }

  /// What the watched task allocated (heapline_watch_task). Past the notes the shim keeps, a
  /// body's allocations off its own thread are not its, and stderr says so.
  private static func watchedAllocations() -> Set<AllocID> {
    let count = heapline_watched_allocations(nil, nil, 0)
    let kept = min(count, Int(HEAPLINE_WATCHED_MAX))
    var serials = [UInt32](repeating: 0, count: kept)
    var counters = [UInt64](repeating: 0, count: kept)
    let got = min(kept, heapline_watched_allocations(&serials, &counters, kept))
    if count > kept {
      say(
        "heapline: the leak check's body made \(count) allocations off its own thread; those "
          + "past the first \(kept) are not counted as its")
    }
    return Set((0..<got).map { AllocID(threadSerial: serials[$0], counter: counters[$0]) })
  }

  /// The mark that ends the async body, on its thread.
  private static let bodyEndMark = "heapline: the body ended"

  /// Throws what the check found that involves `bodyThread`'s blocks, or the blocks in
  /// `elsewhere`: those the async body's task made on other threads (the main actor's, when the
  /// body is isolated to it). All of the main actor's thread's blocks made while the body ran
  /// would charge a body with what main-actor tests running beside it leaked or kept.
  private static func judge(
    path: String, check: LeakCheck?, bodyThread: UInt32, elsewhere: Set<AllocID> = [],
    failOn: LeakReport.Failure, liveBytesAtMost limit: UInt64?
  ) throws {
    guard limit != nil || check?.isClean == false else { return }
    let reader = try TraceReader(path: path)
    let bodys = Set(reader.chunks.filter { $0.threadID == bodyThread }.map(\.threadSerial))
    func isBodys(_ id: AllocID) -> Bool {
      bodyThread == 0 || bodys.contains(id.threadSerial) || elsewhere.contains(id)
    }
    var live: [AllocID: (size: UInt64, stack: StackID)] = [:]
    // The async body's thread goes on to resume the caller (in dispatch's continuations,
    // which dispatch keeps cached): not the body's doing.
    var ended = false
    var stream = reader.events()
    while let event = try stream.next() {
      switch event {
      case .alloc(let alloc) where !ended && isBodys(alloc.id):
        live[alloc.id] = (alloc.size, alloc.stack)
      case .free(let free): live[free.id] = nil
      case .mark(let mark) where mark.name == bodyEndMark: ended = true
      default: break
      }
    }
    let metadata = stream.metadata
    if let check, !check.isClean, let scan = metadata.leakScans[check.scan] {
      // The scan covers the whole process: keep the leaks that body's thread took part in.
      let mine = scan.onlyLeaksInvolving { isBodys($0.id) }
      let report = LeakReport(scan: mine, metadata: metadata, path: path, symbolizer: Symbolizer())
      if report.fails(on: failOn) { throw LeaksFound(report: report) }
    }
    guard let limit else { return }
    // A runtime's own blocks, which the leak report leaves out by default, are not the body's:
    // dispatch keeps the continuations that the body's own `Task.sleep` made cached for its
    // thread, and a test that only slept had 128 to 3,254 bytes "still live", over its limit.
    let runtimes = runtimeStacks(of: Set(live.values.map(\.stack)), metadata: metadata)
    let kept = live.values.filter { !runtimes.contains($0.stack) }
    let bytes = kept.reduce(0) { $0 + $1.size }
    if bytes > limit {
      throw LiveBytesOverLimit(limit: limit, bytes: bytes, blocks: UInt64(kept.count))
    }
  }

  /// Those of `stacks` that are a runtime's own (loader, libc, dispatch, Swift), as the leak
  /// report's default suppressions name them.
  private static func runtimeStacks(of stacks: Set<StackID>, metadata: TraceMetadata)
    -> Set<StackID>
  {
    guard !stacks.isEmpty else { return [] }
    let symbols = Symbolizer().symbolize(
      stacks.flatMap { metadata.frames(of: $0) }, modules: metadata.modules)
    return stacks.filter { stack in
      let frames = metadata.frames(of: stack).flatMap { symbols[$0] ?? [] }
      return LeakDefaultSuppression.all.contains { $0.matches(frames) }
    }
  }

  /// Runs `work` on a new thread, on a fresh stack, and waits for it to finish.
  private static func onThreadOfItsOwn(_ work: () throws -> Void) throws {
    var result: Result<Void, any Error> = .success(())
    // A new thread has no task-locals: carry over that it runs inside a recording.
    let inside = isInsideRecording
    try withoutActuallyEscaping(work) { work in
      let thread = try FreshThread {
        result = Result { try $isInsideRecording.withValue(inside) { try work() } }
      }
      thread.join()
    }
    try result.get()
  }

  /// The kernel's id of the calling thread, which chunk headers carry: /proc/thread-self links
  /// to `PID/task/TID` (Swift cannot call the variadic `syscall`).
  static func currentThreadID() -> UInt32 {
    var link = [CChar](repeating: 0, count: 64)
    let length = readlink("/proc/thread-self", &link, link.count - 1)
    guard length > 0 else { return 0 }
    let text = String(decoding: link.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return text.split(separator: "/").last.flatMap { UInt32($0) } ?? 0
  }

  private static func temporaryLeakTracePath() -> String {
    let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(directory)/heapline-leaks-XXXXXX.trace".utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, 6) }
    if fd >= 0 { close(fd) }
    return String(
      decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}

extension Recording {
  /// The report of a leak scan made during the recording (``Heapline/checkLeaks()``): its last
  /// complete scan, or the one numbered `scan`.
  ///
  /// - Throws: `AnalysisError` when the recording made no such scan.
  public func leaks(
    scan: UInt64? = nil, suppressions: LeakSuppressions = LeakSuppressions(),
    symbolize: Bool = true
  ) throws -> LeakReport {
    try LeakReport.read(
      path: trace.path, scan: scan, suppressions: suppressions,
      symbolizer: symbolize ? Symbolizer() : nil)
  }
}

/// A value that crosses into a task that surely ends before the caller returns.
private struct UncheckedSendable<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}

/// The error that the leak check throws when `body` left more bytes live than it allows.
public struct LiveBytesOverLimit: Error, CustomStringConvertible, Sendable {
  /// The bytes allowed.
  public let limit: UInt64
  /// The bytes still live at the end, in blocks that `body`'s thread allocated.
  public let bytes: UInt64
  public let blocks: UInt64

  public var description: String {
    "\(bytes) bytes in \(blocks) blocks allocated by the test are still live, over its limit of"
      + " \(limit) bytes"
  }
}
