/// A module whose file on disk is no longer the one the trace recorded: its frames keep
/// `module+0xoffset` rather than names from another build.
public struct ChangedModule: Hashable, Sendable {
  /// The module's path, as the trace recorded it.
  public var path: String
  /// Whether the file is gone (or unreadable) rather than rebuilt.
  public var isMissing: Bool

  /// The one-line notice: which module, what happened to it, what its frames show instead.
  public var notice: String {
    let what =
      isMissing ? "is gone or unreadable" : "was rebuilt since the recording (its build ID differs)"
    return "module '\(path)' \(what): its frames are shown as module+offset, not symbolized"
  }
}

extension Symbolizer {
  /// Whether `module`'s file still has the build ID the trace recorded. A module recorded
  /// without a build ID cannot be checked and counts as unchanged.
  public static func change(of module: TraceModule) -> ChangedModule? {
    // The vDSO has a build ID but no file: only paths on disk can be checked.
    guard !module.buildID.isEmpty, module.path.hasPrefix("/") else { return nil }
    guard let onDisk = ELFBuildID.read(path: module.path) else {
      return ChangedModule(path: module.path, isMissing: true)
    }
    return onDisk == module.buildID ? nil : ChangedModule(path: module.path, isMissing: false)
  }
}
