import HeaplineTrace

extension Growth {
  /// Computes the growth from `from` to `to` in one pass over the trace, holding only the
  /// blocks allocated since `from` that are still live.
  ///
  /// An event belongs to the extent when it comes after the `from` mark and before the `to`
  /// mark in the trace's time order. With `start`, the extent begins before the first event;
  /// with `end`, it ends after the last.
  ///
  /// - Throws: ``AnalysisError/unknownMark(_:path:known:)`` for a mark the trace does not
  ///   hold, ``AnalysisError/marksOutOfOrder(from:to:)`` when `to` comes before `from`, and
  ///   ``AnalysisError/trace(_:)`` for a damaged trace.
  public init(reader: TraceReader, from: MarkReference, to: MarkReference)
    throws(AnalysisError)
  {
    var pass = GrowthPass(from: from, to: to)
    var events = LookaheadEvents(reader.events(leakBlocks: false))
    while let event = try events.nextEvent(prefetching: { pass.prefetch($0) }) {
      pass.apply(event)
    }
    let endTime = max(reader.trailer?.endTime ?? reader.endTimeLowerBound, pass.lastTime)
    let path = reader.path
    guard let fromTime = pass.fromTime ?? (from == .end ? endTime : nil) else {
      throw .unknownMark(from.description, path: path, known: pass.markNames)
    }
    let toTime: UInt64
    switch to {
    case .end: toTime = pass.toTime ?? endTime
    case .start: toTime = 0
    case .named(let name):
      guard let time = pass.toTime ?? pass.toTimeBeforeFrom else {
        throw .unknownMark(name, path: path, known: pass.markNames)
      }
      toTime = time
    }
    if pass.toTimeBeforeFrom != nil || (to == .start && from != .start)
      || (from == .end && to != .end)
    {
      throw .marksOutOfOrder(from: from.description, to: to.description)
    }
    var categories = Tally<CategoryID>()
    var stacks = Tally<StackID>()
    var bytes: UInt64 = 0
    for block in pass.live.values {
      categories.add(block.category, bytes: block.size)
      stacks.add(block.stack, bytes: block.size)
      bytes &+= block.size
    }
    let metadata = events.stream.metadata
    self.init(
      from: from, to: to, fromTime: fromTime, toTime: toTime, count: UInt64(pass.live.count),
      bytes: bytes, categories: categories.categories(metadata: metadata),
      stacks: stacks.stacks(metadata: metadata), modules: metadata.modules)
  }
}

/// The state of a growth pass: whether the extent has begun or ended, and its live blocks.
private struct GrowthPass {
  struct Block {
    var size: UInt64
    var stack: StackID
    var category: CategoryID
  }

  let from: MarkReference
  let to: MarkReference
  var live = LiveTable<Block>()
  var fromTime: UInt64?
  var toTime: UInt64?
  /// When the `to` mark came before the `from` mark had been seen: an error, unless `from`
  /// never comes at all.
  var toTimeBeforeFrom: UInt64?
  var lastTime: UInt64 = 0
  /// Names of the generation marks, first occurrences only, in order.
  var markNames: [String] = []
  private var seenNames: Set<String> = []

  init(from: MarkReference, to: MarkReference) {
    self.from = from
    self.to = to
    if from == .start { fromTime = 0 }
    if to == .start { toTime = 0 }
  }

  private var isTracking: Bool { fromTime != nil && toTime == nil }

  /// See ``LookaheadEvents``.
  mutating func prefetch(_ id: AllocID) { live.prefetch(id) }

  mutating func apply(_ event: TraceEvent) {
    lastTime = max(lastTime, event.time)
    switch event {
    case .mark(let mark) where mark.kind == .generation:
      guard seenNames.insert(mark.name).inserted else { return }
      markNames.append(mark.name)
      if fromTime == nil, from == .named(mark.name) { fromTime = mark.time }
      if to == .named(mark.name) {
        if fromTime == nil { toTimeBeforeFrom = mark.time } else { toTime = mark.time }
      }
    case .alloc(let alloc) where isTracking:
      _ = live.insert(
        alloc.id, Block(size: alloc.size, stack: alloc.stack, category: alloc.category))
    case .free(let free) where isTracking:
      _ = live.remove(free.id)
    default:
      break
    }
  }
}
