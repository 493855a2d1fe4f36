import ArgumentParser

/// The `heapline` command: records programs into trace files and analyses those files.
struct HeaplineCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "heapline",
    abstract: "Record where a program's memory goes, and report it.",
    discussion: """
      Record a program with `heapline record -- PROGRAM [ARGS...]`, then read the trace with \
      `heapline report FILE`.
      """,
    version: "0.1.0",
    subcommands: [
      Record.self, Report.self, Timeline.self, Objects.self, Diff.self, Export.self, Leaks.self,
      View.self, Lint.self, Retainers.self, Merge.self,
    ])
}
