extension Symbolizer {
  /// The tool's answers to `queries`, one block per query: from ``cache`` where it has them,
  /// from one run of the tool for the rest, whose answers the cache then keeps.
  func lookUp(_ queries: [Query]) -> [[SymbolizerOutput.Entry]] {
    guard let cache, let toolPath else { return runTool(queries) }
    var modules: [[UInt8]: CachedModule] = [:]
    var answers: [[SymbolizerOutput.Entry]] = Array(repeating: [], count: queries.count)
    var misses: [Int] = []
    for (index, query) in queries.enumerated() {
      if modules[query.buildID] == nil {
        let identity = SymbolCache.identity(
          tool: toolPath, path: query.path, buildID: query.buildID)
        modules[query.buildID] = CachedModule(
          identity: identity,
          known: identity.map { cache.answers(buildID: query.buildID, identity: $0) } ?? [:])
      }
      if let known = modules[query.buildID]?.known[query.address] {
        answers[index] = known
      } else {
        misses.append(index)
      }
    }
    guard !misses.isEmpty else { return answers }
    let fresh = runTool(misses.map { queries[$0] })
    for (index, answer) in zip(misses, fresh) { answers[index] = answer }
    // A run that stopped short may have answered nothing right: keep none of it.
    guard fresh.count == misses.count else { return answers }
    var added: [[UInt8]: [UInt64: [SymbolizerOutput.Entry]]] = [:]
    for index in misses where modules[queries[index].buildID]?.identity != nil {
      added[queries[index].buildID, default: [:]][queries[index].address] =
        answers[index].filter { $0.function != nil || $0.file != nil }
    }
    for (buildID, answers) in added {
      cache.store(answers, buildID: buildID, identity: modules[buildID]!.identity!)
    }
    return answers
  }

  /// What the cache holds for one build ID.
  private struct CachedModule {
    var identity: String?
    var known: [UInt64: [SymbolizerOutput.Entry]]
  }
}
