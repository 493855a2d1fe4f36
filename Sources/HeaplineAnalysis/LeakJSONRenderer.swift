import HeaplineTrace

/// The leak report as JSON, laid out in <doc:LeaksJSON>: the scan, the totals, and every group
/// with its members' symbolized stacks. Keys keep their documented order.
public struct LeakJSONRenderer: LeakReportRenderer {
  /// How frame names are written (``FrameStyle/fullNames``; every frame is kept).
  public var style: FrameStyle

  /// Creates a JSON renderer that names frames in `style`.
  public init(style: FrameStyle = FrameStyle()) {
    self.style = style
  }

  public func render(_ report: LeakReport) -> String {
    let document = JSONValue.object([
      ("schema_version", .unsigned(1)),
      ("trace", .string(report.path)),
      ("scan", Self.scan(report.scan)),
      ("scans", .array(report.scans.map(Self.scan))),
      ("definitely_lost", Self.amount(report.definitelyLost)),
      ("indirectly_lost", Self.amount(report.indirectlyLost)),
      ("possibly_lost", Self.amount(report.possiblyLost)),
      ("suppressed", Self.amount(report.suppressed)),
      ("suppressed_by_default", .array(report.suppressedByDefault.map(Self.suppressedByDefault))),
      ("groups", .array(report.groups.map { Self.group($0, style: style) })),
      ("suppressed_groups", .array(report.suppressedGroups.map { Self.group($0, style: style) })),
      (
        "default_suppressed_groups",
        .array(report.defaultSuppressedGroups.map { Self.group($0, style: style) })
      ),
    ])
    return document.rendered() + "\n"
  }

  private static func scan(_ scan: LeakScan) -> JSONValue {
    .object([
      ("id", .unsigned(scan.id)),
      ("trigger", .string(scan.trigger.description)),
      ("time_ns", .unsigned(scan.time)),
      ("live_blocks", .unsigned(scan.liveBlocks)),
      ("live_bytes", .unsigned(scan.liveBytes)),
      ("root_bytes", .unsigned(scan.rootBytes)),
      ("threads_stopped", .unsigned(scan.threadsStopped)),
      ("threads_unresponsive", .unsigned(scan.threadsUnresponsive)),
      ("stop_ns", .unsigned(scan.stopNanoseconds)),
      ("total_ns", .unsigned(scan.totalNanoseconds)),
      ("reported_blocks", .unsigned(scan.announcedBlocks)),
      ("complete", .bool(scan.isComplete)),
    ])
  }

  private static func suppressedByDefault(_ count: LeakDefaultSuppression.Count) -> JSONValue {
    .object([
      ("name", .string(count.suppression.name)),
      ("summary", .string(count.suppression.summary)),
      ("groups", .unsigned(UInt64(count.groups))),
      ("blocks", .unsigned(count.amount.blocks)),
      ("bytes", .unsigned(count.amount.bytes)),
    ])
  }

  private static func amount(_ amount: LeakAmount) -> JSONValue {
    .object([("blocks", .unsigned(amount.blocks)), ("bytes", .unsigned(amount.bytes))])
  }

  private static func group(_ group: LeakGroup, style: FrameStyle) -> JSONValue {
    .object([
      ("kind", .string(group.kind.rawValue)),
      ("name", .string(group.name)),
      ("instances", .signed(group.instances)),
      ("definitely_lost", amount(group.definitelyLost)),
      ("indirectly_lost", amount(group.indirectlyLost)),
      ("possibly_lost", amount(group.possiblyLost)),
      ("suppressed_by", .string(group.suppressedBy)),
      ("members", .array(group.members.map { member($0, style: style) })),
      ("members_left_out", .signed(group.membersLeftOut)),
    ])
  }

  private static func member(_ member: LeakGroupMember, style: FrameStyle) -> JSONValue {
    .object([
      ("category", .string(member.category.name)),
      ("category_kind", .string(member.category.kind.description)),
      ("size", .unsigned(member.size)),
      ("address", .address(member.address.rawValue)),
      ("alloc", .string("\(member.id.threadSerial):\(member.id.counter)")),
      ("frames", JSONReportRenderer.frames(member.frames, style: style)),
    ])
  }
}
