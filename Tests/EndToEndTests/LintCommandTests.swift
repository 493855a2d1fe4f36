import Foundation
import Testing

/// `heapline lint` as a user runs it: the compiler's warning format or JSON, and its exit
/// statuses (1 found, 0 none, 64 usage, 2 unreadable).
@Suite struct LintCommandTests {
  static let cycle = """
    final class Model {
      var onChange: (() -> Void)?
      func go() {}
      func wire() { onChange = { self.go() } }
    }

    """

  func write(_ text: String, as name: String) throws -> String {
    let path = try Harness.temporaryDirectory().appendingPathComponent(name).path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  @Test func aCycleIsAWarningInTheCompilersFormatAndExitStatus1() throws {
    let path = try write(Self.cycle, as: "Model.swift")
    let result = try Harness.run(Harness.heapline, ["lint", path], timeout: 60)
    #expect(result.status == 1)
    #expect(
      result.stdout
        == "\(path):4:28: warning: closure captures 'self' strongly and is assigned to"
        + " 'onChange', which 'self' keeps: a retain cycle; capture [weak self] or"
        + " [unowned self]\n")
    #expect(result.stderr == "")
  }

  @Test func jsonFormatListsTheFindings() throws {
    let path = try write(Self.cycle, as: "Model.swift")
    let result = try Harness.run(Harness.heapline, ["lint", "--format", "json", path], timeout: 60)
    #expect(result.status == 1)
    let objects =
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
    #expect(objects?.count == 1)
    #expect(objects?.first?["kind"] as? String == "property")
    #expect(objects?.first?["line"] as? Int == 4)
  }

  @Test func weakSelfIsCleanWithExitStatus0() throws {
    let clean = Self.cycle.replacingOccurrences(
      of: "{ self.go() }", with: "{ [weak self] in self?.go() }")
    let path = try write(clean, as: "Model.swift")
    let result = try Harness.run(Harness.heapline, ["lint", path], timeout: 60)
    #expect(result.status == 0)
    #expect(result.stdout == "")
    let json = try Harness.run(Harness.heapline, ["lint", "--format", "json", path], timeout: 60)
    #expect(json.status == 0)
    #expect(json.stdout == "[\n\n]\n")
  }

  @Test func noPathIsAUsageError() throws {
    let result = try Harness.run(Harness.heapline, ["lint"], timeout: 60)
    expectUsageError(result, mentioning: "give at least one file or directory", subcommand: "lint")
  }

  @Test func aMissingPathIsOneErrorLineAndExitStatus2() throws {
    let result = try Harness.run(
      Harness.heapline, ["lint", "/nonexistent/Model.swift"], timeout: 60)
    #expect(result.status == 2)
    #expect(
      result.stderr
        == "heapline: cannot read '/nonexistent/Model.swift': no such file or directory\n")
    #expect(result.stdout == "")
  }
}
