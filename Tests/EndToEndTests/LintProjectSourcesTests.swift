import Foundation
import Testing

/// `heapline lint` on this project's own Swift code, each target's directory as one module, in
/// child processes (parsing every file takes seconds and much memory, which the in-process
/// leak scans of other tests need not walk). Each finding was checked by hand: all three are
/// the deliberate cycles that the leak tests look for, a controller whose store keeps a
/// callback that captures the controller.
@Suite struct LintProjectSourcesTests {
  static let root =
    URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path + "/"

  /// The project's Swift modules, as directories (the lint's truth table apart: its fixtures
  /// are cycles on purpose, and no target compiles them).
  static func modules() throws -> [[String]] {
    let manager = FileManager.default
    var modules: [[String]] = [[root + "Plugins/HeaplineLintPlugin"]]
    for parent in ["Sources", "Tools", "Tests"] {
      for name in try manager.contentsOfDirectory(atPath: root + parent).sorted() {
        let path = root + parent + "/" + name
        var isDirectory: ObjCBool = false
        manager.fileExists(atPath: path, isDirectory: &isDirectory)
        guard isDirectory.boolValue else { continue }
        if name == "HeaplineLintTests" {
          modules.append(
            try manager.contentsOfDirectory(atPath: path).sorted()
              .filter { $0.hasSuffix(".swift") }.map { path + "/" + $0 })
        } else {
          modules.append([path])
        }
      }
    }
    return modules
  }

  @Test func theProjectsOwnCodeHasExactlyTheLeakTestsDeliberateCycles() throws {
    var found: [String] = []
    for module in try Self.modules() {
      let result = try Harness.run(Harness.heapline, ["lint"] + module, timeout: 120)
      #expect(result.status == (result.stdout.isEmpty ? 0 : 1), "\(module): \(result.stderr)")
      found += result.stdout.split(separator: "\n").map { String($0.dropFirst(Self.root.count)) }
    }
    let stored =
      ": warning: closure captures 'self' strongly and is assigned to 'store.onChange', which"
      + " 'self' keeps: a retain cycle; capture [weak self] or [unowned self]"
    #expect(
      found == [
        "Tests/EndToEndTests/Fixtures/releasecycles.swift:18:22" + stored,
        "Tests/HeaplineTests/LeakCheckXCTests.swift:11:22" + stored,
        "Tests/LeakAPIFixture/main.swift:48:22" + stored,
        "Tests/LeakFixture/main.swift:40:22" + stored,
      ])
  }
}
