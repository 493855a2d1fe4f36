import HeaplineTrace

/// Renders a ``LeakReport`` in one output format: text or JSON.
public protocol LeakReportRenderer {
  /// The whole report, ending with a newline.
  func render(_ report: LeakReport) -> String
}

/// The human-readable leak report: the scan, the totals by kind, then each group with its
/// counts and the symbolized allocation stacks of the blocks it starts at.
///
/// ```
/// Leaked cycle: ViewController → Store → closure context → ViewController
///   1 leak: 3 blocks (144 B) definitely lost, 2 blocks (96 B) indirectly lost
///   ViewController, 48 B, allocated at:
///       #0 ViewController.init()  main.swift:12  (app)
/// ```
public struct LeakTextRenderer: LeakReportRenderer {
  /// How frames are written.
  public var style: FrameStyle

  /// Creates a text renderer that writes frames in `style`.
  public init(style: FrameStyle = FrameStyle()) {
    self.style = style
  }

  public func render(_ report: LeakReport) -> String {
    var lines = headerLines(report)
    if report.groups.isEmpty {
      let suppressed = !report.suppressedGroups.isEmpty || !report.defaultSuppressedGroups.isEmpty
      lines.append("")
      lines.append(
        suppressed
          ? "No leaks left once suppressions are applied."
          : "No leaks: every block is reachable from the program's roots.")
    }
    for group in report.groups { lines += [""] + groupLines(group) }
    if !report.suppressedGroups.isEmpty {
      let count = report.suppressedGroups.count
      lines += [
        "",
        "Suppressed: \(Self.amount(report.suppressed)) in \(count) group\(count == 1 ? "" : "s")",
      ]
      for group in report.suppressedGroups {
        lines.append("  \(Self.title(group)) (\(group.suppressedBy ?? ""))")
      }
    }
    if !report.suppressedByDefault.isEmpty {
      lines += ["", "Suppressed by default (--no-default-suppressions shows them):"]
      for count in report.suppressedByDefault {
        let groups = "\(count.groups) group\(count.groups == 1 ? "" : "s")"
        lines.append(
          "  \(count.suppression.name): \(Self.amount(count.amount)) in \(groups),"
            + " \(count.suppression.summary)")
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }

  private func headerLines(_ report: LeakReport) -> [String] {
    let scan = report.scan
    // A rotated file's scans go on with the recording's numbers: "scan 17 of 9" said nothing.
    let first = report.scans.first?.id ?? scan.id, last = report.scans.last?.id ?? scan.id
    let which =
      first == 1
      ? "scan \(scan.id) of \(report.scans.count)"
      : "scan \(scan.id) (this file holds scans \(first) to \(last))"
    var lines = [
      "Leaks in '\(report.path)': \(which), made"
        + " \(Self.describe(scan.trigger)), \(TimeText.duration(scan.time)) into the recording"
    ]
    lines.append(
      "  Scanned \(ByteCountText.grouped(scan.liveBlocks)) live blocks"
        + " (\(ByteCountText.grouped(scan.liveBytes)) B) from"
        + " \(ByteCountText.grouped(scan.rootBytes)) B of roots; other threads stopped for"
        + " \(TimeText.duration(scan.stopNanoseconds)), scan took \(TimeText.duration(scan.totalNanoseconds))"
    )
    if scan.threadsUnresponsive > 0 {
      lines.append(
        "  \(scan.threadsUnresponsive) thread(s) did not stop in time: their"
          + " stacks were scanned whole, without their registers")
    }
    if !scan.isComplete {
      lines.append("  Scan INCOMPLETE: the trace ends before all of its records")
    }
    // Block counts right aligned under each other, the bytes after them.
    let rows = [
      ("Definitely lost", report.definitelyLost), ("Indirectly lost", report.indirectlyLost),
      ("Possibly lost", report.possiblyLost),
    ]
    let counts = rows.map { ByteCountText.grouped($0.1.blocks) }
    let width = counts.map(\.count).max() ?? 0
    return lines
      + zip(rows, counts).map { row, count in
        let label = row.0.padding(toLength: 16, withPad: " ", startingAt: 0)
        let padding = String(repeating: " ", count: width - count.count)
        return "  \(label)\(padding)\(count) \(row.1.blocks == 1 ? "block " : "blocks")"
          + " (\(ByteCountText.grouped(row.1.bytes)) B)"
      }
  }

  private func groupLines(_ group: LeakGroup) -> [String] {
    var counts: [String] = []
    if group.definitelyLost.blocks > 0 {
      counts.append("\(Self.amount(group.definitelyLost)) definitely lost")
    }
    if group.indirectlyLost.blocks > 0 {
      counts.append("\(Self.amount(group.indirectlyLost)) indirectly lost")
    }
    if group.possiblyLost.blocks > 0 {
      counts.append("\(Self.amount(group.possiblyLost)) possibly lost (only interior pointers)")
    }
    let leaks = "\(ByteCountText.grouped(UInt64(group.instances))) leak\(group.instances == 1 ? "" : "s")"
    var lines = [Self.title(group), "  \(leaks): " + counts.joined(separator: ", ")]
    // Members of one category and size whose stacks read the same are shown once, counted.
    var shown: [(member: LeakGroupMember, frames: [String], count: Int)] = []
    for member in group.members {
      let frames = FrameLines.lines(member.frames, style: style)
      if let at = shown.firstIndex(where: {
        $0.member.category.id == member.category.id && $0.member.size == member.size
          && $0.frames == frames
      }) {
        shown[at].count += 1
      } else {
        shown.append((member, frames, 1))
      }
    }
    for (member, frames, count) in shown {
      let times = count > 1 ? "\(ByteCountText.grouped(UInt64(count))) × " : ""
      let each = count > 1 ? " each" : ""
      lines.append(
        "  \(times)\(member.shortName), \(ByteCountText.grouped(member.size)) B\(each), allocated at:"
      )
      lines += frames
    }
    if group.membersLeftOut > 0 {
      let more = ByteCountText.grouped(UInt64(group.membersLeftOut))
      lines.append("  … and \(more) more blocks it starts at, not shown")
    }
    return lines
  }

  static func title(_ group: LeakGroup) -> String {
    switch group.kind {
    case .rootLeak: "Root leak: \(group.name)"
    case .cycle: "Leaked cycle: \(group.name)"
    case .possiblyLost: "Possibly lost: \(group.name)"
    }
  }

  static func amount(_ amount: LeakAmount) -> String {
    "\(ByteCountText.grouped(amount.blocks)) block\(amount.blocks == 1 ? "" : "s")"
      + " (\(ByteCountText.grouped(amount.bytes)) B)"
  }

  private static func describe(_ trigger: LeakScan.Trigger) -> String {
    switch trigger {
    case .exit: "at exit"
    case .signal: "on a signal"
    case .timer: "on the timer"
    case .api: "from the API"
    default: trigger.description
    }
  }
}
