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
