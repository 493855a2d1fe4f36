import Heapline
import HeaplineTesting
import XCTest

/// A controller whose store's callback captures it strongly: a retain cycle.
final class StronglyBoundController {
  let store = CallbackStore()
  var title = ""

  func bind(suffix: String = "!") {
    store.onChange = { self.title = "changed" + suffix }
  }
}

/// `Heapline.expectNoLeaks` in XCTest: a thrown error fails the test, as in Swift Testing.
final class LeakCheckXCTests: XCTestCase {
  func testAWeaklyBoundControllerLeaksNothing() throws {
    try Heapline.expectNoLeaks { WeaklyBoundController().bind() }
  }

  func testAStronglyBoundControllerIsALeakedCycle() {
    XCTAssertThrowsError(try Heapline.expectNoLeaks { StronglyBoundController().bind() }) {
      error in
      // A leaked cycle; in this process, where other tests run, a stale word that points into
      // one of its blocks may make it "possibly lost" instead: a leak either way.
      let description = String(describing: error)
      XCTAssertTrue(
        description.contains(
          ": StronglyBoundController → CallbackStore → closure context → StronglyBoundController"),
        description)
    }
  }
}

/// `XCTAssertNoLeaks`, passing, in this process.
final class LeakAssertionXCTests: XCTestCase {
  // The async form is checked in a process of its own (LeakAssertionXCTFixtures): here, the
  // words its executor and tasks leave behind could hide the leak that
  // testAStronglyBoundControllerIsALeakedCycle expects.
  func testAWeaklyBoundControllerPassesXCTAssertNoLeaks() {
    XCTAssertNoLeaks { WeaklyBoundController().bind() }
  }
}

/// `XCTAssertNoLeaks` failing on purpose, run only by LeakFreeTraitEndToEndTests in a process of
/// its own (HEAPLINE_FAILING_FIXTURES=1), which checks that each failure is at its line.
final class LeakAssertionXCTFixtures: XCTestCase {
  override func setUpWithError() throws {
    try XCTSkipUnless(runsFailingFixtures, "fails on purpose: run by LeakFreeTraitEndToEndTests")
  }

  func testAWeaklyBoundControllerPassesTheAsyncXCTAssertNoLeaks() async {
    await XCTAssertNoLeaks {
      await Task.yield()
      WeaklyBoundController().bind()
    }
  }

  func testAStronglyBoundControllerFailsXCTAssertNoLeaks() {
    XCTAssertNoLeaks("the editor") { StronglyBoundController().bind() }
  }

  func testKeeping25GadgetsFailsALimitOf1431Bytes() {
    // A first check, unbounded, leaves the runtime's lazily made caches behind
    XCTAssertNoLeaks { keptGadgets = (0..<25).map { _ in Gadget() } }
    XCTAssertNoLeaks(liveBytesAtMost: 1_431) { keptGadgets = (0..<25).map { _ in Gadget() } }
  }
}
