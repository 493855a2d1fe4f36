import Foundation
import HeaplineTrace
import Synchronization

/// How analysis passes read a trace.
public enum TraceReading {
  private static let secondThread = Atomic<Bool>(false)

  /// Whether passes read, decode and merge on a thread of their own (`EventPipe`). Off by
  /// default: inside a program that records itself (the `Heapline` module's in-process
  /// recordings and leak checks), a finished thread's stack stays mapped in glibc's cache of
  /// stacks, full of decoded addresses, where the next leak scan would take them for
  /// pointers. The `heapline` command turns it on.
  public static var usesSecondThread: Bool {
    get { secondThread.load(ordering: .relaxed) }
    set { secondThread.store(newValue, ordering: .relaxed) }
  }
}

/// A trace's events, read, checked, decompressed, decoded and merged on a thread of their own,
/// and handed over a batch at a time, so that a pass applies one batch while the next is read:
/// on two cores a pass takes the longer of the two halves, not their sum.
///
/// The thread keeps at most ``maxBatches`` batches ahead (a few hundred kilobytes), so memory
/// stays bounded whatever the trace's length. An error ends the events at the point where it
/// was met: every event before it is handed over first. A pass that ends early asks for the
/// rest's metadata (``drain()``); one that is dropped stops the thread at its next batch.
final class EventPipe: @unchecked Sendable {
  static let batchSize = 4096
  static let maxBatches = 4

  private let condition = NSCondition()
  // Guarded by `condition`.
  private var batches: [[TraceEvent]] = []
  private var ending: Result<TraceEventStream, TraceError>?
  private var stopAsked = false
  private var drainAsked = false

  private init() {}

  /// Starts reading `stream` on a new thread. The pipe lives until that thread ends.
  static func start(_ stream: TraceEventStream) -> Handle {
    let pipe = EventPipe()
    let start = StreamBox(stream)
    let thread = Thread { pipe.produce(start.take()) }
    thread.name = "heapline-events"
    thread.start()
    return Handle(pipe)
  }

  /// The consumer's hold on a pipe: dropping it stops the thread.
  final class Handle {
    fileprivate let pipe: EventPipe
    fileprivate init(_ pipe: EventPipe) { self.pipe = pipe }
    deinit { pipe.stop(drain: false) }

    /// The next batch, or `nil` after the last event; throws the error that ended the events.
    func nextBatch() throws(TraceError) -> [TraceEvent]? { try pipe.nextBatch() }

    /// The stream as the thread left it: its metadata complete. After ``nextBatch()`` returned
    /// `nil`, or ``drain()``.
    func finalStream() throws(TraceError) -> TraceEventStream { try pipe.awaitEnding().get() }

    /// Stops the events where the thread is, and reads the rest of the trace for its metadata.
    func drain() throws(TraceError) -> TraceEventStream {
      pipe.stop(drain: true)
      return try pipe.awaitEnding().get()
    }
  }

  private func produce(_ initial: TraceEventStream) {
    var stream = initial
    var batch: [TraceEvent] = []
    batch.reserveCapacity(Self.batchSize)
    do throws(TraceError) {
      while true {
        try stream.next(into: &batch, limit: Self.batchSize)
        guard batch.count == Self.batchSize else { break }
        guard push(batch) else { return try finishStopped(&stream) }
        batch = []
        batch.reserveCapacity(Self.batchSize)
      }
      if !batch.isEmpty, !push(batch) { return try finishStopped(&stream) }
      end(.success(stream))
    } catch {
      if !batch.isEmpty { _ = push(batch) }
      end(.failure(error))
    }
  }

  /// After a stop: the metadata of the rest, when it was asked for.
  private func finishStopped(_ stream: inout TraceEventStream) throws(TraceError) {
    condition.lock()
    let drain = drainAsked
    condition.unlock()
    if drain { try stream.drainMetadata() }
    end(.success(stream))
  }

  /// Queues a batch, waiting for room; false once the consumer stopped.
  private func push(_ batch: [TraceEvent]) -> Bool {
    condition.lock()
    defer { condition.unlock() }
    while batches.count >= Self.maxBatches && !stopAsked { condition.wait() }
    guard !stopAsked else { return false }
    batches.append(batch)
    condition.broadcast()
    return true
  }

  private func end(_ result: Result<TraceEventStream, TraceError>) {
    condition.lock()
    ending = result
    condition.broadcast()
    condition.unlock()
  }

  private func nextBatch() throws(TraceError) -> [TraceEvent]? {
    condition.lock()
    defer { condition.unlock() }
    while batches.isEmpty && ending == nil { condition.wait() }
    if !batches.isEmpty {
      condition.broadcast()
      return batches.removeFirst()
    }
    if case .failure(let error) = ending { throw error }
    return nil
  }

  private func stop(drain: Bool) {
    condition.lock()
    stopAsked = true
    drainAsked = drainAsked || drain
    batches.removeAll()
    condition.broadcast()
    condition.unlock()
  }

  private func awaitEnding() -> Result<TraceEventStream, TraceError> {
    condition.lock()
    defer { condition.unlock() }
    while ending == nil { condition.wait() }
    return ending!
  }
}

/// Hands a stream to the thread that reads it; nothing else touches it meanwhile.
private final class StreamBox: @unchecked Sendable {
  private var stream: TraceEventStream?
  init(_ stream: TraceEventStream) { self.stream = stream }
  func take() -> TraceEventStream {
    defer { stream = nil }
    return stream!
  }
}
