import ArgumentParser

#if canImport(Glibc)
  import Glibc
#endif

extension HeaplineCommand {
  /// The name of an analysis for its progress line, or `nil` when `command` shows none:
  /// `record`, whose terminal belongs to the program, and an analysis that streams its output
  /// to a terminal, where the line would fall between the rows.
  static func progressLabel(for command: any ParsableCommand) -> String? {
    func streams(_ output: String?) -> Bool { (output == nil || output == "-") && isatty(1) == 1 }
    switch command {
    case is Report: return "report"
    case is Leaks: return "leaks"
    case let timeline as Timeline: return streams(timeline.output) ? nil : "timeline"
    case let objects as Objects: return streams(objects.output) ? nil : "objects"
    case let diff as Diff: return streams(diff.output) ? nil : "diff"
    case let export as Export: return streams(export.output) ? nil : "export"
    case let view as View: return streams(view.output) ? nil : "view"
    default: return nil
    }
  }
}
