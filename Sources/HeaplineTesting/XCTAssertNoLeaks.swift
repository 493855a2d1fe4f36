import Heapline
import XCTest

/// Asserts that `body` leaks nothing, as `Heapline.expectNoLeaks` checks it, and fails the test at the caller's line with the leaked groups and the user's
/// frames that allocated them.
///
/// ```swift
/// func testClosingTheEditorLeaksNothing() {
///   XCTAssertNoLeaks {
///     let editor = Editor()
///     editor.open()
///     editor.close()
///   }
/// }
/// ```
///
/// - Parameters:
///   - message: what the failure says before the leaks, to tell one call from another.
///   - failOn: the least severe leak that fails: `.definitely` (the default) or `.possibly`.
///   - liveBytesAtMost: the most bytes that blocks `body` allocated may still hold when it
///     returns, leaked or not; `nil` for no bound.
///   - file: the file the failure is reported in: the caller's.
///   - line: the line the failure is reported at: the caller's.
///   - body: runs on a thread of its own; an error it throws fails the test too.
public func XCTAssertNoLeaks(
  _ message: @autoclosure () -> String = "", failOn: LeakReport.Failure = .definitely,
  liveBytesAtMost: UInt64? = nil, file: StaticString = #filePath, line: UInt = #line,
  _ body: () throws -> Void
) {
  do {
    try Heapline.expectNoLeaks(failOn: failOn, liveBytesAtMost: liveBytesAtMost, body)
  } catch {
    fail(error, message(), file: file, line: line)
  }
}

/// Asserts that the `async` body leaks nothing: it runs, with the child tasks it starts, on an
/// executor thread of its own, as the Swift Testing trait ``LeakFreeTrait`` runs a test.
/// Otherwise as the synchronous ``XCTAssertNoLeaks(_:failOn:liveBytesAtMost:file:line:_:)-5xf0w``.
public func XCTAssertNoLeaks(
  _ message: @autoclosure () -> String = "", failOn: LeakReport.Failure = .definitely,
  liveBytesAtMost: UInt64? = nil, file: StaticString = #filePath, line: UInt = #line,
  _ body: () async throws -> Void
) async {
  do {
    try await Heapline.expectNoLeaks(failOn: failOn, liveBytesAtMost: liveBytesAtMost, body)
  } catch {
    fail(error, message(), file: file, line: line)
  }
}

private func fail(_ error: any Error, _ message: String, file: StaticString, line: UInt) {
  let found: String
  switch error {
  case is LeaksFound, is LiveBytesOverLimit: found = "\(error)"
  default: found = "threw \(error)"
  }
  let prefix = message.isEmpty ? "" : "\(message): "
  XCTFail("XCTAssertNoLeaks failed: \(prefix)\(found)", file: file, line: line)
}
