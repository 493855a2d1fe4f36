import ArgumentParser
import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Synchronization

/// The options of every command that prints frames: how names and paths are written, and the
/// symbolizer that warns, once per module, about modules rebuilt since the recording.
struct FrameOptions: ParsableArguments {
  @Flag(help: "Show Swift names in full (module-qualified, with types) rather than simplified.")
  var fullNames = false

  @Option(
    help: ArgumentHelp(
      "Show source paths under this directory relative to it (default: the current directory).",
      valueName: "directory"))
  var root: String?

  @Flag(
    help:
      "Show every frame: the allocator's and the Swift runtime's, thunks, and those below main.")
  var allFrames = false

  /// The style these options ask for.
  var style: FrameStyle {
    FrameStyle(
      fullNames: fullNames, root: root ?? FileManager.default.currentDirectoryPath,
      showsHiddenFrames: allFrames)
  }

  /// `llvm-symbolizer` after the symbols stored in `traces`, or `nil` for module offsets only,
  /// telling of changed modules on stderr.
  func symbolizer(_ symbolize: Bool, traces: [String]) throws -> Symbolizer? {
    guard symbolize else { return nil }
    var stored = StoredSymbols()
    for trace in traces { stored.merge(try TraceReader(path: trace).storedSymbols()) }
    return Symbolizer(
      toolPath: Symbolizer.locateTool(), stored: stored, onChangedModule: Self.warn,
      cache: .standard())
  }

  /// Each module is named once per run, though several analyses symbolize.
  private static let warned = Mutex<Set<String>>([])

  private static func warn(_ change: ChangedModule) {
    guard warned.withLock({ $0.insert(change.path).inserted }) else { return }
    CLIOutput.warning(change.notice)
  }
}
