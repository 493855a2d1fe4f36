import HeaplineAnalysis
import HeaplineTrace

/// The tables of a profile being encoded: strings, functions, locations and mappings, each
/// made once and referred to by index or id, as profile.proto asks.
struct PprofTables {
  private(set) var strings: [String] = [""]
  private var stringIndex: [String: Int64] = ["": 0]
  private(set) var functions: [Perftools_Profiles_Function] = []
  private var functionIDs: [FunctionKey: UInt64] = [:]
  private(set) var locationTable: [Perftools_Profiles_Location] = []
  private var locationIDs: [LocationKey: UInt64] = [:]
  /// The location of a group of frames of ``HeapProfile/frames`` in a run, once made: stacks
  /// share most of their frames, and making a location names every function in it.
  private var locationOfGroup: [FrameGroup: UInt64] = [:]
  private var mappingIDs: [MappingKey: UInt64] = [:]
  private var mappingsByID: [UInt64: Perftools_Profiles_Mapping] = [:]
  /// Each run's first mapping id: a run's modules take consecutive ids from there.
  private let firstMappingID: [UInt64]
  private let runs: [HeapProfile.Run]
  private let style: FrameStyle

  init(runs: [HeapProfile.Run], style: FrameStyle) {
    self.runs = runs
    self.style = style
    var next: UInt64 = 1
    firstMappingID = runs.map { run in
      defer { next += UInt64(run.modules.count) }
      return next
    }
  }

  /// The mappings that locations refer to, by id: the first run's main program (its first
  /// module) first, as pprof expects.
  var mappings: [Perftools_Profiles_Mapping] {
    mappingsByID.keys.sorted().map { mappingsByID[$0]! }
  }

  /// The index of `text` in the string table.
  mutating func string(_ text: String) -> Int64 {
    if let index = stringIndex[text] { return index }
    let index = Int64(strings.count)
    strings.append(text)
    stringIndex[text] = index
    return index
  }

  /// The location ids of a sample's frames (indices into `frames`, innermost first): one
  /// location per return address, holding the functions inlined there before the one that
  /// contains it.
  mutating func locations(of places: [Int], in frames: [SymbolizedFrame], run: Int) -> [UInt64] {
    var ids: [UInt64] = []
    var group = FrameGroup(run: run, places: [])
    for (index, place) in places.enumerated() {
      group.places.append(place)
      let frame = frames[place]
      let next = index + 1 < places.count ? frames[places[index + 1]] : nil
      // A recursive call may return to the same address twice in a row: a frame that is not
      // inlined ends its location whatever follows.
      if !frame.isInlined || next?.pc != frame.pc {
        if let known = locationOfGroup[group] {
          ids.append(known)
        } else {
          let id = location(group.places.map { frames[$0] }, run: run)
          locationOfGroup[group] = id
          ids.append(id)
        }
        group.places.removeAll(keepingCapacity: true)
      }
    }
    return ids
  }

  private mutating func location(_ frames: [SymbolizedFrame], run: Int) -> UInt64 {
    let pc = frames[0].pc
    var lines: [Perftools_Profiles_Line] = []
    for frame in frames {
      var line = Perftools_Profiles_Line()
      line.functionID = function(frame)
      line.line = Int64(frame.line ?? 0)
      line.column = Int64(frame.column ?? 0)
      lines.append(line)
    }
    let key = LocationKey(
      run: run, pc: pc, lines: lines.map { [$0.functionID, UInt64(bitPattern: $0.line)] })
    if let id = locationIDs[key] { return id }
    var location = Perftools_Profiles_Location()
    location.id = UInt64(locationTable.count + 1)
    location.address = pc
    location.mappingID = mapping(of: pc, run: run)
    if location.mappingID != 0, frames.contains(where: { $0.function != nil }) {
      // pprof looks up the addresses of a mapping without functions itself.
      mappingsByID[location.mappingID]!.hasFunctions_p = true
      mappingsByID[location.mappingID]!.hasInlineFrames_p = true
    }
    if location.mappingID != 0, frames.contains(where: { $0.line != nil }) {
      mappingsByID[location.mappingID]!.hasFilenames_p = true
      mappingsByID[location.mappingID]!.hasLineNumbers_p = true
    }
    location.line = lines
    locationTable.append(location)
    locationIDs[key] = location.id
    return location.id
  }

  private mutating func function(_ frame: SymbolizedFrame) -> UInt64 {
    let name = style.name(frame)
    let key = FunctionKey(
      name: name, systemName: frame.systemName ?? frame.function ?? name,
      file: frame.file.map(style.relative) ?? "")
    if let id = functionIDs[key] { return id }
    var function = Perftools_Profiles_Function()
    function.id = UInt64(functions.count + 1)
    function.name = string(key.name)
    function.systemName = string(key.systemName)
    function.filename = string(key.file)
    functions.append(function)
    functionIDs[key] = function.id
    return function.id
  }

  /// The mapping of the module that holds `pc` in `run`, or 0 outside every module.
  private mutating func mapping(of pc: UInt64, run: Int) -> UInt64 {
    let modules = runs[run].modules
    guard let index = modules.lastIndex(where: { $0.contains(pc) }) else { return 0 }
    let key = MappingKey(run: run, module: index)
    if let id = mappingIDs[key] { return id }
    let module = modules[index]
    var mapping = Perftools_Profiles_Mapping()
    mapping.id = firstMappingID[run] + UInt64(index)
    // The loaded range spans the module's segments. Its first byte is the start of the first
    // segment, which ELF linkers place at file offset 0.
    let start = module.segments.map(\.start).min() ?? 0
    let end = module.segments.map { $0.start &+ $0.size }.max() ?? 0
    mapping.memoryStart = module.loadBias &+ start
    mapping.memoryLimit = module.loadBias &+ end
    mapping.filename = string(module.path)
    mapping.buildID = string(module.buildID.map { hex($0) }.joined())
    mappingIDs[key] = mapping.id
    mappingsByID[mapping.id] = mapping
    return mapping.id
  }

  private func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16)
    return byte < 16 ? "0" + digits : digits
  }

  private struct FunctionKey: Hashable {
    var name: String
    var systemName: String
    var file: String
  }

  private struct LocationKey: Hashable {
    var run: Int
    var pc: UInt64
    var lines: [[UInt64]]
  }

  private struct MappingKey: Hashable {
    var run: Int
    var module: Int
  }
}

/// Frames of one return address in one run, by their places in ``HeapProfile/frames``.
private struct FrameGroup: Hashable {
  var run: Int
  var places: [Int]
}
