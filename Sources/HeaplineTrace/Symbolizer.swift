/// Turns return addresses into function names and source lines, offline, with the module map a
/// trace recorded.
///
/// It runs `llvm-symbolizer` once per call, in batch mode, over every address it is given, and
/// demangles Swift names in process. Without a symbolizer, or for an address it cannot
/// resolve, a frame falls back to `module+0xoffset`: symbolizing never fails.
///
/// ```swift
/// let symbolizer = Symbolizer()  // finds llvm-symbolizer
/// let frames = symbolizer.symbolize(pcs, modules: metadata.modules)
/// frames[pcs[0]]?.last?.displayName  // "main.makeBuffer(count: Swift.Int) -> …"
/// frames[pcs[0]]?.last?.name(fullNames: false)  // "makeBuffer(count:)"
/// ```
public struct Symbolizer: Sendable {
  /// The `llvm-symbolizer` executable, or `nil` to symbolize with module offsets only.
  public var toolPath: String?
  /// Told about each module whose file changed since the recording (see ``ChangedModule``),
  /// once per ``symbolize(_:modules:)`` call; its frames are not symbolized.
  public var onChangedModule: (@Sendable (ChangedModule) -> Void)?
  /// Symbols the trace holds (``TraceReader/storedSymbols()``), used before the files on disk.
  public var stored: StoredSymbols
  /// Answers kept from earlier runs of the tool, looked up before running it; `nil` for none.
  public var cache: SymbolCache?

  /// A symbolizer that runs `toolPath`, after looking in `stored` and then in `cache`.
  public init(
    toolPath: String?, stored: StoredSymbols = StoredSymbols(),
    onChangedModule: (@Sendable (ChangedModule) -> Void)? = nil, cache: SymbolCache? = nil
  ) {
    self.toolPath = toolPath
    self.stored = stored
    self.onChangedModule = onChangedModule
    self.cache = cache
  }

  /// A symbolizer that runs the tool ``locateTool(environment:)`` finds, with the cache
  /// ``SymbolCache/standard(environment:)`` names.
  public init() {
    self.init(toolPath: Self.locateTool(), cache: .standard())
  }

  /// Symbolizes each address in `pcs`, which are return addresses.
  ///
  /// The lookup uses `pc − 1`, inside the call instruction, so the line is the call's and not
  /// the next statement's. A module whose file on disk no longer has the recorded build ID (it
  /// was rebuilt, or is gone) is not looked up: its frames keep `module+0xoffset`, and
  /// ``onChangedModule`` hears of it.
  ///
  /// - Returns: For each address, its frames: inlined functions first, then the function
  ///   that contains the address. Never empty.
  // Made for arrays in this module too: the analyses pass every frame of every stack (a
  // million or more), and the generic form took 60 ns an address to make their set.
  @_specialize(where PCs == [UInt64])
  public func symbolize<PCs: Sequence<UInt64>>(_ pcs: PCs, modules: [TraceModule]) -> [UInt64:
    [SymbolizedFrame]]
  {
    var result: [UInt64: [SymbolizedFrame]] = [:]
    var queries: [Query] = []
    var queryIndex: [Query: Int] = [:]
    var resolved: [(frame: SymbolizedFrame, query: Int)] = []
    var changed: [String: Bool] = [:]
    for pc in Set(pcs) {
      guard let module = modules.last(where: { $0.contains(pc) }) else {
        result[pc] = [SymbolizedFrame(pc: pc)]
        continue
      }
      let address = module.fileAddress(of: pc)
      if let answer = stored.answer(for: module, moduleAddress: address) {
        let base = SymbolizedFrame(pc: pc, modulePath: module.path, moduleAddress: address)
        result[pc] = Self.frames(base: base, answer: answer)
        continue
      }
      if toolPath != nil, isChanged(module, &changed) {
        result[pc] = [SymbolizedFrame(pc: pc, modulePath: module.path, moduleAddress: address)]
        continue
      }
      let query = Query(module, address: address)
      let index = queryIndex[query] ?? queries.count
      if index == queries.count {
        queries.append(query)
        queryIndex[query] = index
      }
      let frame = SymbolizedFrame(pc: pc, modulePath: module.path, moduleAddress: address)
      resolved.append((frame, index))
    }
    let answers = queries.isEmpty ? [] : lookUp(queries)
    for (frame, index) in resolved {
      result[frame.pc] = Self.frames(
        base: frame, answer: index < answers.count ? answers[index] : [])
    }
    return result
  }

  /// Whether `module` changed on disk, checked once per module and told once.
  /// The same file may appear in several module records (one per change of the module map).
  func isChanged(_ module: TraceModule, _ known: inout [String: Bool]) -> Bool {
    if let answer = known[module.path] { return answer }
    let change = Self.change(of: module)
    known[module.path] = change != nil
    if let change { onChangedModule?(change) }
    return change != nil
  }

  /// The simplified name; a closure in top-level code, whose context is only its module,
  /// comes out as `closure #1 in ` and takes the module back: `closure #1 in app`.
  static func simplified(_ mangled: String, full: String?) -> String? {
    guard let simple = SwiftDemangler.simplified(mangled) else { return full }
    guard simple.hasSuffix(" in "), let full, let last = full.split(separator: " ").last else {
      return simple
    }
    return simple + last
  }

  /// One line of symbolizer input: a module file and an address in it, inside the call before
  /// the return address; and the module's build ID, which keys the cache.
  struct Query: Hashable {
    var path: String
    var address: UInt64
    var buildID: [UInt8]

    /// The lookup for the return address `address` in `module`'s file.
    init(_ module: TraceModule, address: UInt64) {
      path = module.path
      self.address = address == 0 ? 0 : address - 1
      buildID = module.buildID
    }
  }

  /// Builds frames from a symbolizer answer; an empty or unknown answer keeps just `base`.
  static func frames(base: SymbolizedFrame, answer: [SymbolizerOutput.Entry]) -> [SymbolizedFrame] {
    let known = answer.filter(\.isKnown)
    guard !known.isEmpty else { return [base] }
    return known.enumerated().map { index, entry in
      var frame = base
      if let name = entry.function {
        frame.function = SwiftDemangler.demangleIfSwift(name)
        frame.systemName = name
        frame.simplifiedFunction = Self.simplified(name, full: frame.function)
        frame.isThunk = SwiftDemangler.isThunk(name)
      }
      frame.file = entry.file
      frame.line = entry.line
      frame.column = entry.column
      frame.isInlined = index < known.count - 1
      return frame
    }
  }
}
