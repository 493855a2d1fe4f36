import Heapline
import Testing

/// A Swift Testing trait that runs a whole test inside Heapline's leak check (the `async`
/// `Heapline.expectNoLeaks`) and records its failures at the test.
///
/// ```swift
/// @Test(.leakFree) func closingTheEditorLeaksNothing() async throws {
///   let editor = Editor()
///   try await editor.open()
///   editor.close()
/// }
///
/// @Test(.leakFree(liveBytesAtMost: 4_096)) func aWarmCacheStaysSmall() { … }
/// ```
///
/// The test runs on an executor thread of its own, with the child tasks it starts; what they
/// allocate is the test's, and the leaks that involve it fail the test. Other tests that run
/// at the same time leak on other threads and do not. Work the test hands to the main actor,
/// an actor with an executor of its own, `Task.detached` or a dispatch queue is not checked.
/// A leak is recorded as an issue at the test's `@Test` line, listing the leaked groups (a
/// cycle by its classes) with the stacks that allocated them, in the user's frames only.
public struct LeakFreeTrait: TestTrait, SuiteTrait, TestScoping {
  /// The least severe leak that fails the test: `.definitely` (the default, as `heapline
  /// leaks`) or `.possibly`, which counts blocks reached only through interior pointers too.
  public var failOn: LeakReport.Failure
  /// The most bytes that blocks the test allocated may still hold when it ends, leaked or not;
  /// `nil` for no bound.
  public var liveBytesAtMost: UInt64?

  /// Applied to a suite, the check applies to each of its tests.
  public var isRecursive: Bool { true }

  public func provideScope(
    for test: Test, testCase: Test.Case?,
    performing function: @Sendable () async throws -> Void
  ) async throws {
    do {
      try await Heapline.expectNoLeaks(failOn: failOn, liveBytesAtMost: liveBytesAtMost) {
        try await function()
      }
    } catch let found as LeaksFound {
      Issue.record(Comment(rawValue: found.description), sourceLocation: test.sourceLocation)
    } catch let over as LiveBytesOverLimit {
      Issue.record(Comment(rawValue: over.description), sourceLocation: test.sourceLocation)
    }
  }
}

extension Trait where Self == LeakFreeTrait {
  /// Fails the test when a block it allocated is leaked (definitely or indirectly lost).
  public static var leakFree: Self { leakFree() }

  /// Fails the test when a block it allocated is leaked at `failOn`'s level, or when the blocks
  /// it allocated still hold more than `liveBytesAtMost` bytes at its end.
  public static func leakFree(
    failOn: LeakReport.Failure = .definitely, liveBytesAtMost: UInt64? = nil
  ) -> Self {
    LeakFreeTrait(failOn: failOn, liveBytesAtMost: liveBytesAtMost)
  }
}
