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

  /// The SYMBOLS payload: per module, a record `0x30` (path, build ID, entry count), then per
  /// address its module address and answer (function, file, line, column per frame, inlined
  /// first; empty strings and zeros for unknowns).
  public var payload: [UInt8] {
    var writer = ByteWriter()
    let byModule = Dictionary(grouping: entries.keys) {
      ModuleKey(path: $0.path, buildID: $0.buildID)
    }
    for module in byModule.keys.sorted(by: {
      ($0.path, $0.buildID.count) < ($1.path, $1.buildID.count)
    }) {
      let keys = byModule[module]!.sorted { $0.address < $1.address }
      writer.appendUInt8(0x30)
      writer.appendLengthPrefixed(Array(module.path.utf8))
      writer.appendLengthPrefixed(module.buildID)
      writer.appendVarint(UInt64(keys.count))
      for key in keys {
        let answer = entries[key]!
        writer.appendVarint(key.address)
        writer.appendVarint(UInt64(answer.count))
        for entry in answer {
          writer.appendLengthPrefixed(Array((entry.function ?? "").utf8))
          writer.appendLengthPrefixed(Array((entry.file ?? "").utf8))
          writer.appendVarint(UInt64(entry.line ?? 0))
          writer.appendVarint(UInt64(entry.column ?? 0))
        }
      }
    }
    return writer.bytes
  }

  /// Reads a SYMBOLS payload.
  init(payload: [UInt8]) throws(ByteCursor.Failure) {
    var cursor = ByteCursor(payload)
    while !cursor.isAtEnd {
      guard try cursor.readUInt8() == 0x30 else { throw .truncated }
      let path = String(decoding: try cursor.readLengthPrefixedBytes(), as: UTF8.self)
      let buildID = Array(try cursor.readLengthPrefixedBytes())
      for _ in 0..<(try cursor.readVarint()) {
        let address = try cursor.readVarint()
        var answer: [SymbolizerOutput.Entry] = []
        for _ in 0..<(try cursor.readVarint()) {
          let function = String(decoding: try cursor.readLengthPrefixedBytes(), as: UTF8.self)
          let file = String(decoding: try cursor.readLengthPrefixedBytes(), as: UTF8.self)
          let line = Int(truncatingIfNeeded: try cursor.readVarint())
          let column = Int(truncatingIfNeeded: try cursor.readVarint())
          answer.append(
            SymbolizerOutput.Entry(
              function: function.isEmpty ? nil : function, file: file.isEmpty ? nil : file,
              line: line == 0 ? nil : line, column: column == 0 ? nil : column))
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
      queries.append(Query(path: module.path, address: address == 0 ? 0 : address - 1))
      places.append((module, address))
    }
    var symbols = StoredSymbols()
    guard !queries.isEmpty else { return symbols }
    let answers = runTool(queries)
    for (place, answer) in zip(places, answers) {
      let known = answer.filter { $0.function != nil || $0.file != nil }
      if !known.isEmpty { symbols.insert(known, for: place.module, moduleAddress: place.address) }
    }
    return symbols
  }
}
