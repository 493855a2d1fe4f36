import Heapline
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
