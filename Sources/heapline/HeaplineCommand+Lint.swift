import ArgumentParser
import HeaplineLint

extension HeaplineCommand {
  /// `heapline lint`: closures in a retain cycle with `self`, found in the source.
  struct Lint: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Find closures that capture self strongly and are stored where self keeps them.",
      discussion: """
        Reads Swift files, and the .swift files under directories, as one module. A closure \
        is reported when it captures `self` strongly (it names `self`, or captures [self]) \
        and is assigned to a stored property of `self`, added to a collection that `self` \
        owns, passed to a parameter that a function of the same files stores, or is the value \
        of a `lazy var`. [weak self] and [unowned self] break the cycle; structs and enums \
        have none.

        Exit status: 1 when a closure is reported, 0 when none is, 64 for a usage error, 2 \
        when a path cannot be read.
        """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
      case text
      case json
    }

    @Argument(help: "Swift files, or directories to search for them.")
    var paths: [String] = []

    @Option(help: "The output format: text (the compiler's warnings) or json.")
    var format: Format = .text

    func validate() throws {
      if paths.isEmpty { throw ValidationError("give at least one file or directory to lint") }
    }

    func run() throws {
      let findings = try RetainCycleLint.lint(paths: paths)
      switch format {
      case .text: try CLIOutput.result(findings.map { $0.diagnostic + "\n" }.joined())
      case .json: try CLIOutput.result(LintFinding.json(findings))
      }
      if !findings.isEmpty { throw ExitCode(1) }
    }
  }
}
