import Foundation
import Testing

/// Leak checks that fail on purpose, in the package's test binary run in a process of its own
/// (HEAPLINE_FAILING_FIXTURES=1 enables them there), where no other test's words can hide a
/// leak: what they report, and where.
@Suite struct LeakFreeTraitEndToEndTests {
  static var testBinary: String {
    URL(fileURLWithPath: Harness.heapline).deletingLastPathComponent()
      .appendingPathComponent("HeaplinePackageTests.xctest").path
  }

  static let environment = ["HEAPLINE_FAILING_FIXTURES": "1", "NO_COLOR": "1"]

  /// The function names of a report's frame lines (`#N name  path:line  (module)`).
  static func frames(_ lines: [String]) -> [String] {
    lines.filter { $0.hasPrefix("        #") }.map { line in
      let numbered = line.drop { $0 == " " }
      let named = String(numbered.drop { $0 != " " }.dropFirst())
      return named.components(separatedBy: "  ").first ?? ""
    }
  }

  @Test func theLeakFreeTraitRecordsALeakAndALiveByteBoundAtTheTest() throws {
    let result = try Harness.run(
      Self.testBinary,
      ["--testing-library", "swift-testing", "--filter", "LeakFreeTraitFixtures"],
      environment: Self.environment)
    let lines = result.stderr.split(separator: "\n").map(String.init)
    // The test fails, and the issue is at its @Test line, not at Heapline's code
    #expect(result.status == 1)
    let strong = "Test aStronglyBoundControllerFailsTheLeakFreeTrait()"
    let start = try #require(
      lines.firstIndex(
        of: "✘ \(strong) recorded an issue at LeakFreeTraitTests.swift:30:4: Issue recorded"),
      "\(result.stderr)")
    let end = try #require(lines.firstIndex { $0.hasPrefix("✘ \(strong) failed after") })
    let report = Array(lines[start..<end])
    // One cycle of 3 blocks, 112 bytes: the controller (40), its store (32) and the closure
    // context (40)
    #expect(report.contains("↳ leaks found: 3 blocks lost, 0 possibly lost"))
    #expect(
      report.contains(
        "  Leaked cycle: StronglyBoundController → CallbackStore → closure context → StronglyBoundController"
      ))
    #expect(report.contains("    1 leak: 3 blocks (112 B) definitely lost"))
    // User frames only: no executor, runtime, thunk or Testing frame
    let test = "LeakFreeTraitFixtures.aStronglyBoundControllerFailsTheLeakFreeTrait()"
    #expect(
      Self.frames(report) == [
        test, "StronglyBoundController.init()", test, "StronglyBoundController.bind(suffix:)", test,
      ])
    // 25 Gadgets of 48 bytes and their array of 232: 1,432 bytes in 26 blocks, over 1,431 and
    // within 1,432
    #expect(
      lines.contains(
        "✘ Test keeping25GadgetsFailsALimitOf1431Bytes() recorded an issue at LeakFreeTraitTests.swift:35:4: Issue recorded"
      ))
    #expect(
      lines.contains(
        "↳ 1432 bytes in 26 blocks allocated by the test are still live, over its limit of 1431 bytes"
      ))
    #expect(
      lines.contains { $0.hasPrefix("✔ Test keeping25GadgetsPassesALimitOf1432Bytes() passed") })
    // A test on the main actor runs on its thread, not on the check's: its leak is found too
    // (it passed, as the check kept only the leaks of its own thread)
    let onMain = "Test aStronglyBoundControllerOnTheMainActorFailsTheLeakFreeTrait()"
    let mainStart = try #require(
      lines.firstIndex(
        of: "✘ \(onMain) recorded an issue at LeakFreeTraitTests.swift:46:15: Issue recorded"),
      "\(result.stderr)")
    let mainEnd = try #require(lines.firstIndex { $0.hasPrefix("✘ \(onMain) failed after") })
    #expect(lines[mainStart..<mainEnd].contains("    1 leak: 3 blocks (112 B) definitely lost"))
    #expect(lines.last?.hasPrefix("✘ Test run with 5 tests in 1 suite failed after") == true)
    #expect(lines.last?.hasSuffix(" seconds with 3 issues.") == true)
  }

  @Test func xctAssertNoLeaksFailsAtTheCallersLine() throws {
    let result = try Harness.run(
      Self.testBinary, ["HeaplineTests.LeakAssertionXCTFixtures"], environment: Self.environment)
    // XCTest writes its log to stdout
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(result.status == 1)
    // Each failure is at the line of the XCTAssertNoLeaks call, with its message
    let errors = lines.filter { $0.contains(": error: ") }.map {
      String($0[$0.range(of: "LeakCheckXCTests.swift:")!.lowerBound...])
    }
    let fixtures = "LeakAssertionXCTFixtures"
    #expect(
      errors == [
        "LeakCheckXCTests.swift:60: error: \(fixtures).testAStronglyBoundControllerFailsXCTAssertNoLeaks"
          + " : failed - XCTAssertNoLeaks failed: the editor: leaks found: 3 blocks lost, 0 possibly lost",
        "LeakCheckXCTests.swift:66: error: \(fixtures).testKeeping25GadgetsFailsALimitOf1431Bytes"
          + " : failed - XCTAssertNoLeaks failed: 1432 bytes in 26 blocks allocated by the test are"
          + " still live, over its limit of 1431 bytes",
      ])
    // The async assertion passes on a closure that captures self weakly
    #expect(
      lines.contains {
        $0.hasPrefix(
          "Test Case 'LeakAssertionXCTFixtures.testAWeaklyBoundControllerPassesTheAsyncXCTAssertNoLeaks' passed"
        )
      })
    #expect(
      lines.contains(
        "Leaked cycle: StronglyBoundController → CallbackStore → closure context → StronglyBoundController"
      ))
    #expect(lines.contains("  1 leak: 3 blocks (112 B) definitely lost"))
    // User frames only: the test's closure, and the controller's init and bind under it
    let frames = lines.filter { $0.hasPrefix("      #") }.map { line in
      let named = String(line.drop { $0 == " " }.drop { $0 != " " }.dropFirst())
      return named.components(separatedBy: "  ").first ?? ""
    }
    let closure = "closure #1 in LeakAssertionXCTFixtur…undControllerFailsXCTAssertNoLeaks()"
    #expect(
      frames == [
        closure, "StronglyBoundController.init()", closure,
        "StronglyBoundController.bind(suffix:)", closure,
      ])
  }
}
