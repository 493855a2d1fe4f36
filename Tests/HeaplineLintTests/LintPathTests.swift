import HeaplineLint
import Testing

@Suite struct LintPathTests {
  @Test func aMissingPathIsAnUnreadableError() {
    #expect(
      throws: LintError.unreadable(path: "/nonexistent", reason: "no such file or directory")
    ) {
      try RetainCycleLint.lint(paths: ["/nonexistent"])
    }
  }
}
