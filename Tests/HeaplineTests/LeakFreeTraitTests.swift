import Foundation
import Heapline
import HeaplineTesting
import Testing

/// Whether the test process runs the tests that fail on purpose: EndToEndTests'
/// LeakFreeTraitEndToEndTests runs them in a process of their own and checks what they report.
let runsFailingFixtures = ProcessInfo.processInfo.environment["HEAPLINE_FAILING_FIXTURES"] == "1"

/// Keeps what the growth fixture makes.
nonisolated(unsafe) var keptGadgets: [Gadget] = []

/// The leak-free trait on tests that pass, in this process.
@Suite struct LeakFreeTraitTests {
  @Test(.leakFree) func aWeaklyBoundControllerPassesTheLeakFreeTrait() async {
    await Task.yield()
    WeaklyBoundController().bind()
  }
}

/// Tests that fail on purpose, run only by LeakFreeTraitEndToEndTests (in a process of its own,
/// where no other test's words can hide a leak). Serialized: the first test warms the runtime's
/// lazily made caches that the growth bound would otherwise count.
@Suite(.serialized, .enabled(if: runsFailingFixtures)) struct LeakFreeTraitFixtures {
  @Test func warmUp() {
    keptGadgets = (0..<25).map { _ in Gadget() }
    keptGadgets = []
  }

  @Test(.leakFree) func aStronglyBoundControllerFailsTheLeakFreeTrait() async {
    await Task.yield()
    StronglyBoundController().bind()
  }

  @Test(.leakFree(liveBytesAtMost: 1_431)) func keeping25GadgetsFailsALimitOf1431Bytes() async {
    await Task.yield()
    keptGadgets = (0..<25).map { _ in Gadget() }
  }

  @Test(.leakFree(liveBytesAtMost: 1_432)) func keeping25GadgetsPassesALimitOf1432Bytes() async {
    await Task.yield()
    keptGadgets = (0..<25).map { _ in Gadget() }
  }

  /// A test on the main actor runs there, not on the check's own thread.
  @MainActor @Test(.leakFree) func aStronglyBoundControllerOnTheMainActorFailsTheLeakFreeTrait() {
    StronglyBoundController().bind()
  }
}
