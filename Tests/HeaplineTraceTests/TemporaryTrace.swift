import Foundation
import HeaplineTrace

/// A trace file in the temporary directory, removed when the value goes away.
final class TemporaryTrace {
  let path: String

  /// Writes `bytes` to a fresh file.
  init(bytes: [UInt8]) throws {
    path =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("heapline-test-\(UUID().uuidString).trace").path
    try Data(bytes).write(to: URL(fileURLWithPath: path))
  }

  /// Writes the writer's file.
  convenience init(_ writer: TraceWriter) throws {
    try self.init(bytes: writer.bytes)
  }

  deinit {
    try? FileManager.default.removeItem(atPath: path)
  }

  /// Every event of the trace, in stream order, and the metadata read along the way.
  func events() throws -> (events: [TraceEvent], metadata: TraceMetadata) {
    var stream = try TraceReader(path: path).events()
    var events: [TraceEvent] = []
    while let event = try stream.next() { events.append(event) }
    return (events, stream.metadata)
  }
}
