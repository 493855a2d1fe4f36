import HeaplineTrace

/// One generation of a trace, as Instruments' heapshots show them: the extent from one mark
/// to the next (the first from the start, the last to the end), what it allocated, and what
/// of that is still live at the end of the trace.
///
/// ```swift
/// for generation in try Generation.all(in: TraceReader(path: "app.trace")) {
///   print(generation.name, generation.persistentBytes)
/// }
/// ```
public struct Generation: Hashable, Sendable {
  /// The mark that opens the generation; `start` for the first.
  public var name: String
  /// Its start, in nanoseconds since the trace's start.
  public var startTime: UInt64
  /// Its end: the next mark's time, or the end of the trace.
  public var endTime: UInt64
  /// Allocations made in it.
  public var allocationCount: UInt64 = 0
  /// Bytes allocated in it.
  public var allocatedBytes: UInt64 = 0
  /// Of those, blocks still live at the end of the trace.
  public var persistentCount: UInt64 = 0
  /// Their bytes.
  public var persistentBytes: UInt64 = 0
  /// The persistent blocks by category, most bytes first.
  public var categories: [CategoryGrowth] = []

  /// An empty generation.
  public init(name: String, startTime: UInt64, endTime: UInt64) {
    self.name = name
    self.startTime = startTime
    self.endTime = endTime
  }

  /// The category with this display name, if the generation's persistent blocks hold any.
  public func category(named name: String) -> CategoryGrowth? {
    categories.first { $0.name == name }
  }

  /// The generations of a trace, split at every generation mark (not at memory warnings), in
  /// one pass that holds only the live blocks.
  ///
  /// - Throws: ``AnalysisError/trace(_:)`` for a damaged trace.
  public static func all(in reader: TraceReader) throws(AnalysisError) -> [Generation] {
    var generations = [Generation(name: "start", startTime: 0, endTime: 0)]
    var live = LiveTable<(size: UInt64, category: CategoryID, generation: Int)>()
    var events = LookaheadEvents(reader.events(leakBlocks: false))
    var lastTime: UInt64 = 0
    while let event = try events.nextEvent(prefetching: { live.prefetch($0) }) {
      lastTime = max(lastTime, event.time)
      switch event {
      case .alloc(let alloc):
        _ = live.insert(alloc.id, (alloc.size, alloc.category, generations.count - 1))
        generations[generations.count - 1].allocationCount &+= 1
        generations[generations.count - 1].allocatedBytes &+= alloc.size
      case .free(let free):
        _ = live.remove(free.id)
      case .mark(let mark) where mark.kind == .generation:
        generations[generations.count - 1].endTime = mark.time
        generations.append(Generation(name: mark.name, startTime: mark.time, endTime: 0))
      default:
        break
      }
    }
    generations[generations.count - 1].endTime = max(
      reader.trailer?.endTime ?? reader.endTimeLowerBound, lastTime)
    var tallies = Array(repeating: Tally<CategoryID>(), count: generations.count)
    for block in live.values {
      tallies[block.generation].add(block.category, bytes: block.size)
      generations[block.generation].persistentCount &+= 1
      generations[block.generation].persistentBytes &+= block.size
    }
    let metadata = events.stream.metadata
    for index in generations.indices {
      generations[index].categories = tallies[index].categories(metadata: metadata)
    }
    return generations
  }
}
