import Foundation
import HeaplineLint
import Testing

/// The lint on this project's own Swift code, each target's files as one module. Each finding
/// was checked by hand: all three are the deliberate cycles that the leak tests look for, a
/// controller whose store keeps a callback that captures the controller.
@Suite struct ProjectSourcesTests {
  static let root =
    URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path + "/"

  @Test func theProjectsOwnCodeHasExactlyTheLeakTestsDeliberateCycles() throws {
    let manager = FileManager.default
    var modules: [String] = ["Plugins/HeaplineLintPlugin"]
    for parent in ["Sources", "Tools", "Tests"] {
      for name in try manager.contentsOfDirectory(atPath: Self.root + parent).sorted() {
        var isDirectory: ObjCBool = false
        manager.fileExists(atPath: Self.root + parent + "/" + name, isDirectory: &isDirectory)
        if isDirectory.boolValue { modules.append(parent + "/" + name) }
      }
    }
    var found: [String] = []
    for module in modules {
      // The truth table's fixtures are cycles on purpose, and no target compiles them.
      let paths =
        module == "Tests/HeaplineLintTests"
        ? try manager.contentsOfDirectory(atPath: Self.root + module).sorted()
          .filter { $0.hasSuffix(".swift") }.map { Self.root + module + "/" + $0 }
        : [Self.root + module]
      found += try RetainCycleLint.lint(paths: paths).map {
        "\($0.file.dropFirst(Self.root.count)):\($0.line):\($0.column) \($0.target)"
      }
    }
    #expect(
      found == [
        "Tests/HeaplineTests/LeakCheckXCTests.swift:10:22 store.onChange",
        "Tests/LeakAPIFixture/main.swift:47:22 store.onChange",
        "Tests/LeakFixture/main.swift:40:22 store.onChange",
      ])
  }

  @Test func aMissingPathIsAnError() {
    #expect(throws: LintError.unreadable(path: "/nonexistent", reason: "no such file or directory"))
    {
      try RetainCycleLint.lint(paths: ["/nonexistent"])
    }
  }
}
