extension Symbolizer {
  /// The tool's answers to `queries`, one block per query: from ``cache`` where it has them,
  /// from one run of the tool for the rest, whose answers the cache then keeps.
  func lookUp(_ queries: [Query]) -> [[SymbolizerOutput.Entry]] {
    guard let cache, let toolPath else { return runTool(queries) }
    let environment = Self.currentEnvironment()
    // By file as well as build ID: one build ID at two paths may be two files (one stripped of
    // its debug information, say), and each answers for itself.
    var modules: [ModuleFile: CachedModule] = [:]
    var answers: [[SymbolizerOutput.Entry]] = Array(repeating: [], count: queries.count)
    var misses: [Int] = []
    for (index, query) in queries.enumerated() {
      let file = ModuleFile(query)
      if modules[file] == nil {
        let identity = SymbolCache.identity(
          tool: toolPath, path: query.path, buildID: query.buildID, environment: environment)
        modules[file] = CachedModule(
          identity: identity,
          known: identity.map { cache.answers(buildID: query.buildID, identity: $0) } ?? [:])
      }
      if let known = modules[file]?.known[query.address] {
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
    var added: [ModuleFile: [UInt64: [SymbolizerOutput.Entry]]] = [:]
    for index in misses {
      let file = ModuleFile(queries[index])
      guard modules[file]?.identity != nil else { continue }
      added[file, default: [:]][queries[index].address] = answers[index].filter(\.isKnown)
    }
    for (file, answers) in added {
      cache.store(answers, buildID: file.buildID, identity: modules[file]!.identity!)
    }
    return answers
  }

  /// A module file: its path and build ID.
  private struct ModuleFile: Hashable {
    var path: String
    var buildID: [UInt8]

    init(_ query: Query) {
      path = query.path
      buildID = query.buildID
    }
  }

  /// What the cache holds for one module file: `identity` is `nil` when nothing is kept for it.
  private struct CachedModule {
    var identity: String?
    var known: [UInt64: [SymbolizerOutput.Entry]]
  }
}
