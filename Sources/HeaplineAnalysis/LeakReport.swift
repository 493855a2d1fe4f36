import HeaplineTrace

/// What one leak scan found, grouped as Instruments' Leaks and `valgrind` group it.
///
/// Each lost block is *definitely lost* when it is where a lost structure starts (nothing lost
/// points to it, or it is part of a cycle that nothing lost points into), *indirectly lost*
/// when only lost blocks point to it, and *possibly lost* when the program still points into
/// its middle but never to its start. Groups are *root leaks* (a block nothing points to, with
/// what hangs from it), *leaked cycles* (blocks that keep each other, named by their
/// categories: `ViewController → Store → closure context → ViewController`) and *possibly lost*
/// blocks. Identical groups (the same categories from stacks that read the same: functions and
/// source lines, or addresses where there is no symbol) are merged and counted.
///
/// ```swift
/// let report = try LeakReport.read(path: "app.trace", symbolizer: Symbolizer())
/// report.hasLeaks                  // true
/// report.groups.first?.name        // "ViewController → Store → closure context → ViewController"
/// report.definitelyLost.bytes      // 144
/// ```
public struct LeakReport: Sendable {
  /// The trace's path.
  public var path: String
  /// The scan reported (its blocks and edges included).
  public var scan: LeakScan
  /// Every scan in the trace, in order.
  public var scans: [LeakScan]
  /// The groups that no suppression matched, most bytes first.
  public var groups: [LeakGroup]
  /// The groups that a suppression of the file matched.
  public var suppressedGroups: [LeakGroup]
  /// The groups that a default suppression matched (the runtimes' own blocks), their
  /// ``LeakGroup/suppressedBy`` the suppression's name.
  public var defaultSuppressedGroups: [LeakGroup] = []
  /// For each default suppression that matched, in the order of
  /// ``LeakDefaultSuppression/all``, what it left out.
  public var suppressedByDefault: [LeakDefaultSuppression.Count] = []
  /// Totals over ``groups``.
  public var definitelyLost = LeakAmount()
  public var indirectlyLost = LeakAmount()
  public var possiblyLost = LeakAmount()
  /// Totals over ``suppressedGroups``.
  public var suppressed = LeakAmount()

  /// Whether anything is lost or possibly lost, suppressions aside.
  public var hasLeaks: Bool { !groups.isEmpty }

  /// What makes `heapline leaks` fail.
  public enum Failure: String, Hashable, Sendable, CaseIterable {
    /// Definitely or indirectly lost blocks.
    case definitely
    /// Those, or possibly lost blocks.
    case possibly
  }

  /// Whether blocks of the kinds that `level` names remain after suppressions.
  public func fails(on level: Failure) -> Bool {
    let lost = definitelyLost.blocks + indirectlyLost.blocks
    return lost > 0 || (level == .possibly && possiblyLost.blocks > 0)
  }

  /// Classifies and groups `scan`'s blocks; `metadata` names their categories and stacks, and
  /// `symbolizer` (or module offsets when `nil`) their frames. `defaultSuppressions` leaves out
  /// the runtimes' own blocks (``LeakDefaultSuppression/all``).
  public init(
    scan: LeakScan, metadata: TraceMetadata, path: String, scans: [LeakScan]? = nil,
    suppressions: LeakSuppressions = LeakSuppressions(), defaultSuppressions: Bool = true,
    symbolizer: Symbolizer?
  ) {
    self.path = path
    self.scan = scan
    self.scans = scans ?? [scan]
    var all = LeakGrouping(scan: scan, metadata: metadata).groups
    let pcs = all.flatMap { $0.members.flatMap { metadata.frames(of: $0.stack) } }
    let symbols = (symbolizer ?? Symbolizer(toolPath: nil)).symbolize(
      pcs, modules: metadata.modules)
    for index in all.indices {
      for member in all[index].members.indices {
        let frames = metadata.frames(of: all[index].members[member].stack)
        all[index].members[member].frames = frames.flatMap {
          symbols[$0] ?? [SymbolizedFrame(pc: $0)]
        }
      }
    }
    all = LeakGrouping.mergedBySymbols(all)
    for index in all.indices {
      all[index].suppressedBy = suppressions.match(all[index].members.flatMap(\.frames))
    }
    suppressedGroups = all.filter { $0.suppressedBy != nil }
    groups = []
    var byDefault: [String: LeakDefaultSuppression.Count] = [:]
    for var group in all where group.suppressedBy == nil {
      guard defaultSuppressions, let rule = LeakDefaultSuppression.match(group) else {
        groups.append(group)
        continue
      }
      group.suppressedBy = rule.name
      defaultSuppressedGroups.append(group)
      byDefault[rule.name, default: .init(suppression: rule, groups: 0, amount: LeakAmount())]
        .groups += 1
      byDefault[rule.name]!.amount.add(group.total)
    }
    suppressedByDefault = LeakDefaultSuppression.all.compactMap { byDefault[$0.name] }
    for group in groups {
      definitelyLost.add(group.definitelyLost)
      indirectlyLost.add(group.indirectlyLost)
      possiblyLost.add(group.possiblyLost)
    }
    for group in suppressedGroups { suppressed.add(group.total) }
  }

  /// Why the trace at `path` holds no leak scan, and how to get one. The scan at exit runs in
  /// exit()'s handlers, which `_exit`, `abort`, a crash or a kill skip.
  static func noScan(path: String, failed: [LeakScanFailure] = []) -> String {
    if let failure = failed.last {
      let which = failure.trigger == .exit ? "the leak scan at exit" : "its leak scans"
      return "trace '\(path)' holds no leak scan: \(which) could not run: \(failure.reason)"
    }
    let endReason = (try? TraceReader(path: path))?.trailer?.endReason
    if endReason == .exec {
      return "trace '\(path)' holds no leak scan: the program left it with exec before its exit,"
        + " and the scan at exit is in the trace of the last program it became"
    }
    if endReason == .endedUnfinished {
      return "trace '\(path)' holds no leak scan: the program ended without exit() (_exit,"
        + " abort, a crash or a kill), where the scan at exit runs; --leaks-every or"
        + " --leaks-signal scan while it runs"
    }
    return "trace '\(path)' holds no leak scan (record with --leaks, --leaks-every or"
      + " --leaks-signal, or call heapline_check_leaks())"
  }

  /// Reads the trace at `path` and reports its scan numbered `scanID`, or its last complete
  /// scan.
  ///
  /// - Throws: ``AnalysisError/trace(_:)`` when the trace cannot be read, and
  ///   ``AnalysisError/invalidOption(_:)`` when it holds no such scan.
  public static func read(
    path: String, scan scanID: UInt64? = nil, suppressions: LeakSuppressions = LeakSuppressions(),
    defaultSuppressions: Bool = true, symbolizer: Symbolizer?
  ) throws(AnalysisError) -> LeakReport {
    let metadata = try TraceMetadata.read(path: path, scan: scanID, showing: \.isComplete)
    let scans = metadata.leakScans.values.sorted { $0.id < $1.id }
    guard !scans.isEmpty else {
      throw .invalidOption(noScan(path: path, failed: metadata.failedLeakScans))
    }
    let chosen: LeakScan
    if let scanID {
      guard let found = metadata.leakScans[scanID] else {
        throw .invalidOption(
          "trace '\(path)' has no leak scan \(scanID) (its scans: \(scans.first!.id) to"
            + " \(scans.last!.id))")
      }
      chosen = found
    } else {
      chosen = scans.last { $0.isComplete } ?? scans.last!
    }
    return LeakReport(
      scan: chosen, metadata: metadata, path: path, scans: scans,
      suppressions: suppressions, defaultSuppressions: defaultSuppressions, symbolizer: symbolizer)
  }
}

/// A number of blocks and their bytes.
public struct LeakAmount: Hashable, Sendable {
  public var blocks: UInt64 = 0
  public var bytes: UInt64 = 0

  public init(blocks: UInt64 = 0, bytes: UInt64 = 0) {
    self.blocks = blocks
    self.bytes = bytes
  }

  mutating func add(_ other: LeakAmount) {
    blocks &+= other.blocks
    bytes &+= other.bytes
  }

  mutating func add(size: UInt64) {
    blocks &+= 1
    bytes &+= size
  }
}
