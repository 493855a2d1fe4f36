import Foundation
import HeaplineLint
import Testing

/// The truth table: each fixture under Fixtures/ (compiled by no target) holds cases
/// with a fixed verdict, and the lint reports exactly the closures marked `warning` there.
@Suite struct TruthTableTests {
  static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Fixtures")

  /// The diagnostics for one fixture, named by its file name alone.
  func lint(_ name: String) throws -> [String] {
    let text = try String(
      contentsOf: Self.fixtures.appendingPathComponent(name), encoding: .utf8)
    return RetainCycleLint.lint(sources: [(file: name, text: text)]).map(\.diagnostic)
  }

  static let advice = ": a retain cycle; capture [weak self] or [unowned self]"

  func warning(_ location: String, _ stored: String) -> String {
    "\(location): warning: closure captures 'self' strongly and \(stored)\(Self.advice)"
  }

  @Test func weakAndUnownedSelfAreNeverReported() throws {
    #expect(try lint("WeakAndUnowned.swift") == [])
  }

  @Test func captureListsOfOtherValuesAreNotReportedButSelfAndAnAliasOfSelfAre() throws {
    #expect(
      try lint("CaptureLists.swift") == [
        warning("CaptureLists.swift:12:16", "is assigned to 'onChange', which 'self' keeps"),
        warning("CaptureLists.swift:13:16", "is assigned to 'onChange', which 'self' keeps"),
      ])
  }

  @Test func anOuterWeakSelfCoversInnerClosuresButAnInnerOneAloneDoesNot() throws {
    #expect(
      try lint("NestedClosures.swift") == [
        warning("NestedClosures.swift:16:16", "is assigned to 'onChange', which 'self' keeps"),
        warning("NestedClosures.swift:17:16", "is assigned to 'onChange', which 'self' keeps"),
      ])
  }

  @Test func structsAndEnumsMakeNoCycle() throws {
    #expect(try lint("ValueTypes.swift") == [])
  }

  @Test func taskDispatchMapLocalsAndWeakOrUnownedOwnersStoreNothingInSelf() throws {
    #expect(try lint("NotStored.swift") == [])
  }

  @Test func aLazyVarClosureIsReportedUnlessItIsCalledAtOnceOrWeak() throws {
    #expect(
      try lint("LazyVars.swift") == [
        warning("LazyVars.swift:7:30", "is the value of lazy var 'run' of 'self'")
      ])
  }

  @Test func aClosureThatReachesSelfOnlyThroughAWeakLocalIsNotReported() throws {
    #expect(try lint("WeakLocal.swift") == [])
  }

  @Test func everyWaySelfKeepsAStrongClosureIsReported() throws {
    let property = "is assigned to 'onChange', which 'self' keeps"
    let handlers = "is added to 'handlers', a collection that 'self' owns"
    let passed = { (name: String) in "is passed to '\(name)', which stores it where 'self' keeps it"
    }
    #expect(
      try lint("Stored.swift") == [
        warning("Stored.swift:16:16", property),
        warning("Stored.swift:17:21", property),
        warning("Stored.swift:18:21", handlers),
        warning("Stored.swift:19:26", handlers),
        warning("Stored.swift:20:18", handlers),
        warning("Stored.swift:21:20", "is added to 'byName', a collection that 'self' owns"),
        warning("Stored.swift:22:13", passed("observe")),
        warning("Stored.swift:23:18", passed("observe")),
        warning("Stored.swift:24:27", passed("subscribe")),
        warning("Stored.swift:25:18", passed("button.onTap")),
        warning("Stored.swift:26:18", passed("later.onTap")),
        warning("Stored.swift:27:21", "is assigned to 'button.action', which 'self' keeps"),
        warning("Stored.swift:39:28", property),  // an actor
        warning("Stored.swift:48:28", property),  // a property of the superclass
        warning("Stored.swift:52:30", property),  // in an extension
      ])
  }

  @Test func aFunctionInAnotherFileOfTheModuleStoresTheParameter() {
    let button = """
      final class Button {
        var action: (() -> Void)?
        func onTap(_ action: @escaping () -> Void) { self.action = action }
      }
      """
    let screen = """
      final class Screen {
        let button = Button()
        func go() {}
        func wire() { button.onTap { self.go() } }
      }
      """
    let alone = RetainCycleLint.lint(sources: [(file: "Screen.swift", text: screen)])
    let together = RetainCycleLint.lint(sources: [
      (file: "Button.swift", text: button), (file: "Screen.swift", text: screen),
    ])
    #expect(alone == [])
    #expect(
      together.map(\.diagnostic) == [
        warning(
          "Screen.swift:4:30", "is passed to 'button.onTap', which stores it where 'self' keeps it")
      ])
  }

  @Test func jsonHoldsEachFindingsLocationKindTargetAndMessage() {
    let finding = LintFinding(file: "A.swift", line: 3, column: 16, kind: .collection, target: "h")
    #expect(
      LintFinding.json([finding]) == """
        [
          {
            "column" : 16,
            "file" : "A.swift",
            "kind" : "collection",
            "line" : 3,
            "message" : "closure captures 'self' strongly and is added to 'h', a collection that 'self' owns\(Self.advice)",
            "target" : "h"
          }
        ]

        """)
  }
}
