import HeaplineTrace

extension TraceMetadata {
  /// Everything the trace at `path` defines (stacks, categories, modules, leak scans), its
  /// events read for nothing else, with a damaged trace reported as an ``AnalysisError``.
  static func read(path: String, keeping scans: LeakScanSelection = .all) throws(AnalysisError)
    -> TraceMetadata
  {
    do {
      var stream = try TraceReader(path: path).events(keeping: scans)
      try stream.drainMetadata()
      return stream.metadata
    } catch {
      throw .trace(error)
    }
  }

  /// The metadata with one leak scan's blocks, edges and graph kept, for a command that shows
  /// one scan: scan `id`, or else the latest, unless `shows` refuses it and accepts an earlier
  /// one (a trace cut short inside its last scan), which is then read again for. A trace
  /// scanned every 10 ms holds hundreds of scans, each of every block lost at that moment.
  static func read(path: String, scan id: UInt64?, showing shows: (LeakScan) -> Bool)
    throws(AnalysisError) -> TraceMetadata
  {
    if let id { return try read(path: path, keeping: .only(id)) }
    let metadata = try read(path: path, keeping: .latest)
    let scans = metadata.leakScans.values.sorted { $0.id < $1.id }
    guard let latest = scans.last, !shows(latest), let earlier = scans.last(where: shows) else {
      return metadata
    }
    return try read(path: path, keeping: .only(earlier.id))
  }
}

extension TraceEventStream {
  /// The next event, with a damaged trace reported as an ``AnalysisError``, so that an
  /// analysis pass throws one error type.
  mutating func nextEvent() throws(AnalysisError) -> TraceEvent? {
    do {
      return try next()
    } catch {
      throw .trace(error)
    }
  }
}

extension LookaheadEvents {
  /// ``next(prefetching:)``, with a damaged trace reported as an ``AnalysisError``.
  mutating func nextEvent(prefetching prefetch: (AllocID) -> Void) throws(AnalysisError)
    -> TraceEvent?
  {
    do {
      return try next(prefetching: prefetch)
    } catch {
      throw .trace(error)
    }
  }
}
