import HeaplineTrace
import Testing

@testable import HeaplineAnalysis

/// A pass's events, read on a thread of their own or on the calling thread, are the plain
/// stream's: the same events in the same order, across many batches, the same error at the
/// same place, and the whole metadata after stopping early.
@Suite struct EventPipeTests {
  /// `allocations` blocks of 32 bytes, 2 ns apart, each freed 64 allocations later, on two
  /// threads in chunks of 5,000 records, each chunk defining the stack its blocks come from,
  /// with the trailer's end time at `endTime`.
  static func trace(allocations: Int, endTime: UInt64? = nil) throws -> (
    trace: TemporaryTrace, stacks: Int
  ) {
    var writer = TraceWriter()
    var chunks = [writer.makeChunk(threadSerial: 1), writer.makeChunk(threadSerial: 2)]
    var window = [AllocID](repeating: AllocID(threadSerial: 0, counter: 0), count: 64)
    var stacks = [StackID(rawValue: 1), StackID(rawValue: 2)]
    for thread in 0..<2 { chunks[thread].stack(stacks[thread], parent: .empty, pc: 0x1000) }
    for index in 0..<allocations {
      let time = UInt64(index) * 2
      let thread = index % 2
      if index >= 64 { chunks[thread].free(at: time, window[index % 64]) }
      window[index % 64] = chunks[thread].alloc(
        at: time + 1, size: 32, address: Address(UInt64(index) * 32), stack: stacks[thread])
      if chunks[thread].recordCount >= 5_000 {
        writer.append(chunks[thread], encoding: .zstd)
        chunks[thread] = writer.makeChunk(threadSerial: UInt32(thread + 1))
        stacks[thread] = StackID(rawValue: stacks[thread].rawValue + 2)
        chunks[thread].stack(stacks[thread], parent: .empty, pc: 0x1000 + stacks[thread].rawValue)
      }
    }
    for chunk in chunks { writer.append(chunk, encoding: .zstd) }
    writer.appendTrailer(endTime: endTime ?? UInt64(allocations) * 2)
    return (try TemporaryTrace(writer), Int(stacks[0].rawValue + stacks[1].rawValue + 1) / 2)
  }

  /// The plain stream's events, and the error that ended them.
  static func plain(_ path: String) throws -> ([TraceEvent], TraceError?, TraceEventStream) {
    var stream = try TraceReader(path: path).events()
    var events: [TraceEvent] = []
    do {
      while let event = try stream.next() { events.append(event) }
    } catch {
      return (events, error, stream)
    }
    return (events, nil, stream)
  }

  /// The pipe's events, and the error that ended them.
  static func piped(_ path: String, threaded: Bool) throws -> (
    [TraceEvent], TraceError?, LookaheadEvents
  ) {
    var events = LookaheadEvents(try TraceReader(path: path).events(), secondThread: threaded)
    var read: [TraceEvent] = []
    do {
      while let event = try events.next(prefetching: { _ in }) { read.append(event) }
    } catch {
      return (read, error, events)
    }
    return (read, nil, events)
  }

  /// Where two event lists first differ, or `nil` (short of the shorter one's end).
  static func firstDifference(_ a: [TraceEvent], _ b: [TraceEvent]) -> Int? {
    zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset
  }

  @Test(arguments: [true, false])
  func eventsComeInTheStreamsOrderAcrossManyBatches(secondThread: Bool) throws {
    // Given 30,000 allocations and 29,936 frees, 14 batches of events
    let (trace, stackCount) = try Self.trace(allocations: 30_000)
    let (expected, _, stream) = try Self.plain(trace.path)
    // When read through the pipe
    let (events, error, piped) = try Self.piped(trace.path, threaded: secondThread)
    // Then they are the same events in the same order, and the metadata is complete
    #expect(error == nil)
    #expect(events.count == 59_936)
    #expect(expected.count == 59_936)
    #expect(Self.firstDifference(events, expected) == nil)
    #expect(piped.eventCount == 59_936)
    #expect(piped.stream.eventCount == stream.eventCount)
    #expect(piped.stream.metadata.stackNodes.count == stackCount)
    #expect(piped.stream.metadata.stackNodes == stream.metadata.stackNodes)
  }

  @Test(arguments: [true, false])
  func aDamagedRecordEndsTheEventsWhereThePlainStreamEndsThem(secondThread: Bool) throws {
    // Given a trailer whose end time falls before the last 50 allocations
    let (trace, _) = try Self.trace(allocations: 30_000, endTime: 59_900)
    let (expected, expectedError, _) = try Self.plain(trace.path)
    // When read through the pipe
    let (events, error, _) = try Self.piped(trace.path, threaded: secondThread)
    // Then every event before the damage comes first, then the same error
    #expect(expectedError != nil)
    #expect(error?.description == expectedError?.description)
    #expect(events.count == expected.count)
    #expect(expected.count > 59_000)
    #expect(Self.firstDifference(events, expected) == nil)
  }

  @Test(arguments: [true, false])
  func aPassThatStopsEarlyStillGetsTheWholeMetadata(secondThread: Bool) throws {
    let (trace, stackCount) = try Self.trace(allocations: 30_000)
    let (_, _, stream) = try Self.plain(trace.path)
    // When a pass takes 5,000 events, then drains the rest
    var events = LookaheadEvents(
      try TraceReader(path: trace.path).events(), secondThread: secondThread)
    for _ in 0..<5_000 { _ = try events.next(prefetching: { _ in }) }
    try events.drainMetadata()
    // Then it handed out 5,000 events, and the metadata is the whole trace's
    #expect(events.eventCount == 5_000)
    #expect(events.stream.metadata.stackNodes.count == stackCount)
    #expect(events.stream.metadata.stackNodes == stream.metadata.stackNodes)
    #expect(events.stream.eventCount == stream.eventCount)
  }
}
