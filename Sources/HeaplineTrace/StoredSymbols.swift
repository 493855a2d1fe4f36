/// Symbols that `heapline record` looked up when the recording finished and stored in the
/// trace's SYMBOLS chunk, as heaptrack's interpreter does: the frames stay right when the
/// program is rebuilt or removed later. ``Symbolizer`` uses them before the files on disk.
///
/// Each entry is keyed by module path, build ID and the return address in the module file,
/// and holds the symbolizer's answer (linkage names, demangled when read, so that names
/// follow the reader's demangling).
///
/// ```swift
/// let stored = try reader.storedSymbols()
/// let symbolizer = Symbolizer(toolPath: Symbolizer.locateTool(), stored: stored)
/// ```
public struct StoredSymbols: Sendable {
  /// Where a return address lies: a module file, as recorded, and an address in it.
  struct Key: Hashable, Sendable {
    var path: String
    var buildID: [UInt8]
    var address: UInt64
  }

  private(set) var entries: [Key: [SymbolizerOutput.Entry]] = [:]

  /// An empty table.
  public init() {}

  /// The number of return addresses with stored symbols.
  public var count: Int { entries.count }

  /// The stored answer for `moduleAddress` in `module`, if any.
  func answer(for module: TraceModule, moduleAddress: UInt64) -> [SymbolizerOutput.Entry]? {
    entries[Key(path: module.path, buildID: module.buildID, address: moduleAddress)]
  }

  mutating func insert(
    _ answer: [SymbolizerOutput.Entry], for module: TraceModule, moduleAddress: UInt64
  ) {
    entries[Key(path: module.path, buildID: module.buildID, address: moduleAddress)] = answer
  }

  /// Adds `other`'s entries (another trace's, for a comparison of two).
  public mutating func merge(_ other: StoredSymbols) {
    entries.merge(other.entries) { mine, _ in mine }
  }

  /// The SYMBOLS payload: a string table (`0x31`, the count, then each string), then per
  /// module a group `0x32` (its path's string, build ID, entry count) and per address its delta
  /// from the group's previous one and its answer (function, file, line, column per frame,
  /// inlined first; string numbers from 1, and 0 or a zero line for an unknown). Names and files
  /// repeat over a program's addresses: each is stored once.
  public var payload: [UInt8] {
    var strings: [String: UInt64] = [:]
    var table: [String] = []
    func number(_ string: String?) -> UInt64 {
      guard let string, !string.isEmpty else { return 0 }
      if let known = strings[string] { return known }
      table.append(string)
      strings[string] = UInt64(table.count)
      return UInt64(table.count)
    }
    var groups = ByteWriter()
    let byModule = Dictionary(grouping: entries.keys) {
      ModuleKey(path: $0.path, buildID: $0.buildID)
    }
    for module in byModule.keys.sorted(by: {
      ($0.path, $0.buildID.count) < ($1.path, $1.buildID.count)
    }) {
      let keys = byModule[module]!.sorted { $0.address < $1.address }
      groups.appendUInt8(0x32)
      groups.appendVarint(number(module.path))
      groups.appendLengthPrefixed(module.buildID)
      groups.appendVarint(UInt64(keys.count))
      var previous: UInt64 = 0
      for key in keys {
        let answer = entries[key]!
        groups.appendVarint(key.address - previous)
        previous = key.address
        groups.appendVarint(UInt64(answer.count))
        for entry in answer {
          groups.appendVarint(number(entry.function))
          groups.appendVarint(number(entry.file))
          groups.appendVarint(UInt64(entry.line ?? 0))
          groups.appendVarint(UInt64(entry.column ?? 0))
        }
      }
    }
    var writer = ByteWriter()
    writer.appendUInt8(0x31)
    writer.appendVarint(UInt64(table.count))
    for string in table { writer.appendLengthPrefixed(Array(string.utf8)) }
    writer.append(groups.bytes)
    return writer.bytes
  }

  /// Reads a SYMBOLS payload: the string table's, or the format before it (groups `0x30`
  /// with every string spelled out, in traces recorded before version 5).
  init(payload: [UInt8]) throws(ByteCursor.Failure) {
    var cursor = ByteCursor(payload)
    var table: [String] = []
    if cursor.peekUInt8() == 0x31 {
      _ = try cursor.readUInt8()
      let count = try cursor.readVarint()
      guard count <= UInt64(cursor.remaining) else { throw .truncated }
      for _ in 0..<count {
        table.append(String(decoding: try cursor.readLengthPrefixedBytes(), as: UTF8.self))
      }
    }
    func string(_ number: UInt64) throws(ByteCursor.Failure) -> String? {
      guard number != 0 else { return nil }
      guard number <= UInt64(table.count) else { throw .truncated }
      return table[Int(number - 1)]
    }
    func spelled(_ cursor: inout ByteCursor) throws(ByteCursor.Failure) -> String? {
      let text = String(decoding: try cursor.readLengthPrefixedBytes(), as: UTF8.self)
      return text.isEmpty ? nil : text
    }
    while !cursor.isAtEnd {
      let tag = try cursor.readUInt8()
      guard tag == 0x30 || (tag == 0x32 && !table.isEmpty) else { throw .truncated }
      let numbered = tag == 0x32
      let path =
        numbered ? try string(try cursor.readVarint()) ?? "" : try spelled(&cursor) ?? ""
      let buildID = Array(try cursor.readLengthPrefixedBytes())
      var address: UInt64 = 0
      for _ in 0..<(try cursor.readVarint()) {
        let step = try cursor.readVarint()
        address = numbered ? address &+ step : step
        var answer: [SymbolizerOutput.Entry] = []
        for _ in 0..<(try cursor.readVarint()) {
          let function = numbered ? try string(try cursor.readVarint()) : try spelled(&cursor)
          let file = numbered ? try string(try cursor.readVarint()) : try spelled(&cursor)
          let line = Int(truncatingIfNeeded: try cursor.readVarint())
          let column = Int(truncatingIfNeeded: try cursor.readVarint())
          answer.append(
            SymbolizerOutput.Entry(
              function: function, file: file, line: line == 0 ? nil : line,
              column: column == 0 ? nil : column))
        }
        entries[Key(path: path, buildID: buildID, address: address)] = answer
      }
    }
  }

  private struct ModuleKey: Hashable {
    var path: String
    var buildID: [UInt8]
  }
}

extension TraceReader {
  /// The symbols stored in the trace's SYMBOLS chunks; empty for a trace without any (every
  /// trace recorded before they existed).
  ///
  /// - Throws: ``TraceError`` when a SYMBOLS chunk is damaged.
  public func storedSymbols() throws(TraceError) -> StoredSymbols {
    var symbols = StoredSymbols()
    for chunk in symbolChunks {
      do {
        symbols.merge(try StoredSymbols(payload: try payload(of: chunk)))
      } catch let error as TraceError {
        throw error
      } catch {
        throw TraceError(
          path: path, reason: .chunkMismatch(chunk: chunk.offset, "its SYMBOLS records run short"))
      }
    }
    return symbols
  }
}

extension Symbolizer {
  /// Looks up every address of `pcs` that lies in a module of `modules` whose file is still
  /// the one recorded, in one run of the tool, and keeps the answers to store in a trace.
  public func storedSymbols<PCs: Sequence<UInt64>>(for pcs: PCs, modules: [TraceModule])
    -> StoredSymbols
  {
    var queries: [Query] = []
    var places: [(module: TraceModule, address: UInt64)] = []
    var changed: [String: Bool] = [:]
    for pc in Set(pcs) {
      guard let module = modules.last(where: { $0.contains(pc) }),
        !isChanged(module, &changed)
      else { continue }
      let address = module.fileAddress(of: pc)
      queries.append(Query(module, address: address))
      places.append((module, address))
    }
    var symbols = StoredSymbols()
    guard !queries.isEmpty else { return symbols }
    let answers = lookUp(queries)
    for (place, answer) in zip(places, answers) {
      let known = answer.filter(\.isKnown)
      if !known.isEmpty { symbols.insert(known, for: place.module, moduleAddress: place.address) }
    }
    return symbols
  }
}
