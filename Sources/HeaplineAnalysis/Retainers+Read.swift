import HeaplineTrace

extension Retainers {
  /// Reads the trace at `path` and finds the paths to `category`'s objects in scan `scanID`, or
  /// in the last scan that kept its graph.
  ///
  /// - Throws: ``AnalysisError/trace(_:)`` when the trace cannot be read,
  ///   ``AnalysisError/unknownCategory(_:path:)`` for a category the trace never names, and
  ///   ``AnalysisError/invalidOption(_:)`` when it holds no such scan, or no scan with a graph.
  public static func read(
    path: String, category: String, scan scanID: UInt64? = nil, symbolizer: Symbolizer?
  ) throws(AnalysisError) -> Retainers {
    let metadata = try TraceMetadata.read(path: path, scan: scanID) { $0.graph != nil }
    let scans = metadata.leakScans.values.sorted { $0.id < $1.id }
    let chosen: LeakScan
    if let scanID {
      guard let found = metadata.leakScans[scanID] else {
        let range = scans.isEmpty ? "it has no scans" : "its scans: 1 to \(scans.last!.id)"
        throw .invalidOption("trace '\(path)' has no leak scan \(scanID) (\(range))")
      }
      guard found.graph != nil else {
        throw .invalidOption(
          "leak scan \(scanID) of '\(path)' kept no graph (record with --graph)")
      }
      chosen = found
    } else {
      guard let last = scans.last(where: { $0.graph != nil }) else {
        throw .invalidOption(
          "trace '\(path)' holds no leak scan with a graph (record with --graph)")
      }
      chosen = last
    }
    // A class or scope the trace named, or a size class of a block the scan reached.
    let reached = Set(chosen.graph!.nodes.map(\.category)).map { metadata.category($0) }
    let name = try CategoryLookup.fullName(
      category, among: Array(metadata.namedCategories.values) + reached, path: path)
    return Retainers(
      scan: chosen, category: name, metadata: metadata, path: path,
      symbolizer: symbolizer)
  }
}
