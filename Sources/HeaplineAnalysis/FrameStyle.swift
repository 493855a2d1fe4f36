import HeaplineTrace

/// How frames are written: names simplified or in full, paths relative to a project, and a cap
/// on the length of a text line. Every renderer that prints frames takes one.
///
/// ```swift
/// var style = FrameStyle(root: "/home/me/app")  // "Sources/App/main.swift:12"
/// style.fullNames = true                         // "App.load(Swift.Int) -> App.Image"
/// ```
public struct FrameStyle: Hashable, Sendable {
  /// Whether Swift names are shown in full (module-qualified, with parameter and result types)
  /// rather than as the runtime's simplified demangling gives them.
  public var fullNames: Bool
  /// Source paths under this directory are shown relative to it; `nil` keeps them as the
  /// debug info has them.
  public var root: String?
  /// The longest text line a frame takes; a longer function name is cut in its middle, with
  /// `…`.
  public var lineWidth: Int
  /// Whether the allocator, thunk and process-start frames are shown too (JSON always holds
  /// them, with their role).
  public var showsHiddenFrames: Bool
  /// Swift modules that call the user's code: a text stack ends before the first frame in one
  /// of them (a function, or a closure in one), so a test's leak report shows the test's
  /// frames and not those of the library that ran it.
  public var hiddenModules: Set<String> = []

  /// A style; the default shows simplified names, absolute paths, at most 160 characters a
  /// line, and user frames only.
  public init(
    fullNames: Bool = false, root: String? = nil, lineWidth: Int = 160,
    showsHiddenFrames: Bool = false
  ) {
    self.fullNames = fullNames
    self.root = root.map { $0.hasSuffix("/") && $0.count > 1 ? String($0.dropLast()) : $0 }
    self.lineWidth = lineWidth
    self.showsHiddenFrames = showsHiddenFrames
  }

  /// The frames a text stack shows, innermost first.
  public func shownFrames(_ frames: [SymbolizedFrame]) -> [SymbolizedFrame] {
    shownIndexes(frames.map(traits)).map { frames[$0] }
  }

  /// What ``shownFrames(_:)`` reads of a frame in this style: found once for a frame that many
  /// stacks share.
  public struct Traits: Sendable {
    var role: FrameRole.Traits
    var isInHiddenModule: Bool
    var isRuntimeCaller: Bool
  }

  /// The traits of `frame` in this style.
  public func traits(_ frame: SymbolizedFrame) -> Traits {
    let hidden = !hiddenModules.isEmpty
    return Traits(
      role: FrameRole.Traits(frame), isInHiddenModule: hidden && isInHiddenModule(frame),
      isRuntimeCaller: hidden && isRuntimeCaller(frame))
  }

  /// The indexes of the frames a text stack shows, of frames given by their traits, innermost
  /// first.
  public func shownIndexes(_ frames: [Traits]) -> [Int] {
    guard !showsHiddenFrames else { return Array(frames.indices) }
    let roles = FrameRole.roles(traits: frames.map(\.role))
    let user = roles.indices.filter { roles[$0] == .user }
    guard !hiddenModules.isEmpty else { return user }
    var kept = Array(user.prefix { !frames[$0].isInHiddenModule })
    if kept.count < user.count {
      // The hidden library reached the user's code through the runtime (an executor running a
      // job: `swift_job_run`, `UnownedJob.runSynchronously`): those frames are the library's.
      while kept.count > 1, let last = kept.last, frames[last].isRuntimeCaller { kept.removeLast() }
    }
    return kept.isEmpty ? user : kept
  }

  /// Whether a frame is the Swift runtime's or the standard library's own code.
  private func isRuntimeCaller(_ frame: SymbolizedFrame) -> Bool {
    guard let name = frame.function else { return false }
    return name.hasPrefix("swift::") || name.hasPrefix("swift_") || name.hasPrefix("Swift.")
  }

  /// Whether the entity a frame runs in belongs to a hidden module: `closure #1 in
  /// Heapline.Heapline.record(…)` runs in `Heapline.Heapline.record`, in module `Heapline`.
  private func isInHiddenModule(_ frame: SymbolizedFrame) -> Bool {
    guard let name = frame.function else { return false }
    // A method named in full, before any " in ": a private one's name holds " in " itself
    // (`Heapline.ThreadExecutor.(runJobs in _B958…)()`).
    if hiddenModules.contains(where: { name.hasPrefix($0 + ".") }) { return true }
    let utf8 = Array(name.utf8)
    let marker = Array(" in ".utf8)
    var start = 0
    if utf8.count >= marker.count {
      for at in stride(from: utf8.count - marker.count, through: 0, by: -1)
      where utf8[at..<at + marker.count].elementsEqual(marker) {
        start = at + marker.count
        break
      }
    }
    var entity = String(decoding: utf8[start...], as: UTF8.self)
    if entity.hasPrefix("static ") { entity.removeFirst(7) }
    return hiddenModules.contains { entity.hasPrefix($0 + ".") }
  }

  /// The frame's function name in this style.
  public func name(_ frame: SymbolizedFrame) -> String {
    frame.name(fullNames: fullNames)
  }

  /// `file:line` in this style: relative to ``root`` when under it.
  public func sourceLocation(_ frame: SymbolizedFrame) -> String? {
    guard let location = frame.sourceLocation else { return nil }
    return relative(location)
  }

  /// `path` relative to ``root`` when it lies under it.
  public func relative(_ path: String) -> String {
    guard let root, root != "/", path.hasPrefix(root + "/") else { return path }
    return String(path.dropFirst(root.count + 1))
  }

  /// `line`, with `name` cut in its middle so the whole fits in ``lineWidth``; `compose` builds
  /// the line from a name.
  func capped(name: String, _ compose: (String) -> String) -> String {
    let line = compose(name)
    guard line.utf8.count > lineWidth else { return line }  // no more characters than bytes
    let excess = line.count - lineWidth
    guard excess > 0 else { return line }
    // Too little room for a readable name: cut the line's end instead.
    guard name.count - excess >= 25 else {
      return String(line.prefix(max(lineWidth - 1, 1))) + "…"
    }
    return compose(Self.cutInMiddle(name, to: name.count - excess))
  }

  /// `text` at most `length` characters long, its middle replaced by `…` when it is longer.
  static func cutInMiddle(_ text: String, to length: Int) -> String {
    guard text.count > length, length > 1 else { return text }
    let keep = length - 1
    return text.prefix((keep + 1) / 2) + "…" + text.suffix(keep / 2)
  }
}
