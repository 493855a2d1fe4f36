import HeaplineTrace

/// The page's leaks: the groups of `heapline leaks` (default suppressions applied), with their
/// members' allocation stacks as indices into the page's frames.
enum HTMLPageLeaks {
  static func json(_ report: LeakReport, limit: Int, frames: inout HTMLPageFrames) -> JSONValue {
    var lost = LeakAmount()
    for block in report.scan.blocks { lost.add(size: block.size) }
    var groups: [JSONValue] = []
    for group in report.groups.prefix(max(0, limit)) {
      var members: [JSONValue] = []
      for member in group.members {
        members.append(
          .object([
            ("category", .string(member.category.name)),
            ("short_name", .string(member.shortName)),
            ("size", .unsigned(member.size)),
            ("frames", frames.indices(of: member.frames)),
          ]))
      }
      groups.append(
        .object([
          ("kind", .string(group.kind.rawValue)),
          ("name", .string(group.name)),
          ("instances", .signed(group.instances)),
          ("definitely_lost", amount(group.definitelyLost)),
          ("indirectly_lost", amount(group.indirectlyLost)),
          ("possibly_lost", amount(group.possiblyLost)),
          ("members", .array(members)),
        ]))
    }
    return .object([
      ("scan_id", .unsigned(report.scan.id)),
      ("scan_time_ns", .unsigned(report.scan.time)),
      ("scan_trigger", .string(report.scan.trigger.description)),
      ("scan_complete", .bool(report.scan.isComplete)),
      ("scan_lost", amount(lost)),
      ("definitely_lost", amount(report.definitelyLost)),
      ("indirectly_lost", amount(report.indirectlyLost)),
      ("possibly_lost", amount(report.possiblyLost)),
      (
        "suppressed_by_default",
        .array(
          report.suppressedByDefault.map { count in
            .object([
              ("name", .string(count.suppression.name)),
              ("summary", .string(count.suppression.summary)),
              ("amount", amount(count.amount)),
            ])
          })
      ),
      ("group_count", .signed(report.groups.count)),
      ("groups", .array(groups)),
    ])
  }

  /// `[blocks, bytes]`.
  private static func amount(_ amount: LeakAmount) -> JSONValue {
    .array([.unsigned(amount.blocks), .unsigned(amount.bytes)])
  }
}
