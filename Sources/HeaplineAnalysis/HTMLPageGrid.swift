import HeaplineTrace

/// When each allocation site allocated and freed, on a coarse grid of time buckets: enough for
/// the page to work out in the browser, for the end of any bucket, what `report --at` gives
/// there, and for any range of buckets, what a generation gives (allocated in the range and
/// still live at its end).
///
/// A site is a pair of the page's stack and category (each "other" beyond the page's top
/// ones). A cell counts the blocks a site allocated in bucket `i` and freed in bucket `j`
/// (`j` is the bucket count for blocks never freed). Bucket `b` holds the times
/// `(b·length, (b+1)·length]`, time 0 in bucket 0, as timeline steps do; its state is that
/// at its end.
struct HTMLPageGrid {
  struct Cell: Hashable, Comparable {
    var site: Int
    var allocated: Int
    var freed: Int

    static func < (lhs: Cell, rhs: Cell) -> Bool {
      (lhs.site, lhs.allocated, lhs.freed) < (rhs.site, rhs.allocated, rhs.freed)
    }
  }

  private(set) var bucketLength: UInt64
  private(set) var bucketCount: Int
  /// `[stack index, category index]` of each site.
  private(set) var sites: [[Int]] = []
  private(set) var cells: [Cell: (count: UInt64, bytes: UInt64)] = [:]

  /// Reads the trace once; `stack` and `category` give each allocation's page indices.
  init(
    reader: TraceReader, bucketLength: UInt64, bucketCount: Int,
    stack: (StackID) -> Int, category: (CategoryID) -> Int
  ) throws(AnalysisError) {
    self.bucketLength = max(1, bucketLength)
    self.bucketCount = max(1, bucketCount)
    var siteIndices: [[Int]: Int] = [:]
    var live = LiveTable<(size: UInt64, site: Int, bucket: Int)>()
    var events = LookaheadEvents(reader.events(leakBlocks: false))
    while let event = try events.nextEvent(prefetching: { live.prefetch($0) }) {
      switch event {
      case .alloc(let alloc):
        let key = [stack(alloc.stack), category(alloc.category)]
        let site: Int
        if let known = siteIndices[key] {
          site = known
        } else {
          site = sites.count
          siteIndices[key] = site
          sites.append(key)
        }
        let block = (alloc.size, site, bucket(alloc.time))
        // A live id allocated again is a damaged record: its first block counts as freed
        // here, as the statistics retire it.
        if let previous = live.insert(alloc.id, block) {
          add(previous, freed: bucket(alloc.time))
        }
      case .free(let free):
        guard let block = live.remove(free.id) else { continue }
        add(block, freed: bucket(free.time))
      default: continue
      }
    }
    for block in live.values { add(block, freed: self.bucketCount) }
  }

  /// Merges buckets pairwise until at most `limit` cells remain (or one bucket does), so
  /// that the page's size stays bounded however the sites spread over time. Exact: a block
  /// allocated and freed within one merged bucket is not live at its end, as in any bucket.
  mutating func coarsen(toAtMost limit: Int) {
    while cells.count > limit && bucketCount > 1 {
      let count = (bucketCount + 1) / 2
      var merged: [Cell: (count: UInt64, bytes: UInt64)] = [:]
      for (cell, value) in cells {
        let freed = cell.freed == bucketCount ? count : cell.freed / 2
        let key = Cell(site: cell.site, allocated: cell.allocated / 2, freed: freed)
        merged[key, default: (0, 0)].count &+= value.count
        merged[key, default: (0, 0)].bytes &+= value.bytes
      }
      cells = merged
      bucketCount = count
      bucketLength &*= 2
    }
  }

  /// The bucket of an event at `time`; events past the last bucket's end fall in it.
  func bucket(_ time: UInt64) -> Int {
    time == 0 ? 0 : Int(min((time - 1) / bucketLength, UInt64(bucketCount - 1)))
  }

  private mutating func add(_ block: (size: UInt64, site: Int, bucket: Int), freed: Int) {
    let cell = Cell(site: block.site, allocated: block.bucket, freed: freed)
    cells[cell, default: (0, 0)].count &+= 1
    cells[cell, default: (0, 0)].bytes &+= block.size
  }

  /// The cells as one flat array of `site, allocated, freed, count, bytes` quintuples, in
  /// order.
  var flatCells: [UInt64] {
    cells.keys.sorted().flatMap { cell in
      let value = cells[cell]!
      return [
        UInt64(cell.site), UInt64(cell.allocated), UInt64(cell.freed), value.count, value.bytes,
      ]
    }
  }
}
