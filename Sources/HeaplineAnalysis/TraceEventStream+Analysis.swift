import HeaplineTrace

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
