import Foundation

/// Symbolizer answers kept between runs, one file per module build ID.
///
/// Every recording ends by symbolizing its stacks, and the C library's frames alone cost
/// `llvm-symbolizer` about 40 ms: it decompresses libc's separate debug information, whatever
/// few addresses it is asked about. The answers for a build ID do not change, so they are kept
/// and looked up first, as `perf`'s build-ID cache and debuginfod's client keep theirs.
///
/// A file answers only for the setup that wrote it, its *identity* (see
/// ``identity(tool:path:buildID:environment:)``): the same tool file, module file and separate
/// debug files. A new toolchain, a reinstalled package or debug symbols installed since make it
/// a miss, and the next run writes it afresh. A damaged or unreadable file is a miss too: the
/// cache can cost a lookup but never change an answer. At most ``fileLimit`` files are kept;
/// past that, the ones used least recently go.
public struct SymbolCache: Sendable {
  /// The directory of cache files.
  public var directory: String

  /// Files kept before the least recently used are removed, down to ``fileLimit`` × 3 / 4.
  public static let fileLimit = 256

  /// A cache in `directory`, made when first written.
  public init(directory: String) {
    self.directory = directory
  }

  /// The cache `environment` names: `HEAPLINE_SYMBOL_CACHE` if set (the empty string turns the
  /// cache off), else `$XDG_CACHE_HOME/heapline/symbols`, else `$HOME/.cache/heapline/symbols`;
  /// `nil` when there is none.
  public static func standard(
    environment: [String: String] = Symbolizer.currentEnvironment()
  ) -> SymbolCache? {
    if let configured = environment["HEAPLINE_SYMBOL_CACHE"] {
      return configured.isEmpty ? nil : SymbolCache(directory: configured)
    }
    if let base = environment["XDG_CACHE_HOME"], base.hasPrefix("/") {
      return SymbolCache(directory: base + "/heapline/symbols")
    }
    guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
    return SymbolCache(directory: home + "/.cache/heapline/symbols")
  }

  /// The identity of answers from `tool` for the module at `path` with `buildID`, under
  /// `environment`; `nil` when they are not to be kept.
  ///
  /// It stamps every file the tool's answer may come from: the tool, the module, and its
  /// separate debug files, by build ID and by `.gnu_debuglink` in the places the tool looks
  /// (beside the module, in `.debug` there, under `/usr/lib/debug`). Answers are not kept for
  /// a module without a build ID, a file that cannot be examined, split DWARF (whose `.dwo`
  /// files are named inside its units), a path the tool's input cannot spell (it is asked about
  /// another file), or a tool told where else to look (`LLVM_SYMBOLIZER_OPTS`,
  /// `DEBUGINFOD_URLS`).
  static func identity(
    tool: String, path: String, buildID: [UInt8], environment: [String: String]
  ) -> String? {
    guard !buildID.isEmpty, !path.contains(where: { $0 == "\"" || $0 == "\n" }),
      ["LLVM_SYMBOLIZER_OPTS", "DEBUGINFOD_URLS"].allSatisfy({ environment[$0] ?? "" == "" }),
      let tool = stamp(tool), let module = stamp(path), let elf = ELFDebugInfo.read(path: path),
      !elf.mayBeSplit
    else { return nil }
    let hex = Self.hex(buildID)
    var debugFiles = ["/usr/lib/debug/.build-id/\(hex.prefix(2))/\(hex.dropFirst(2)).debug"]
    if let link = elf.debugLink {
      let directory = path.hasPrefix("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
      debugFiles += [
        "\(directory)/\(link)", "\(directory)/.debug/\(link)", "/usr/lib/debug\(directory)/\(link)",
      ]
    }
    let debug = debugFiles.map { stamp($0) ?? "none" }.joined(separator: ", ")
    return "tool \(tool); module \(module); debug \(debug)"
  }

  /// The answers stored for `buildID` under `identity`, by lookup address; empty on any miss.
  func answers(buildID: [UInt8], identity: String) -> [UInt64: [SymbolizerOutput.Entry]] {
    let path = file(for: buildID)
    guard let data = FileManager.default.contents(atPath: path),
      let answers = Self.decode(Array(data), identity: identity)
    else { return [:] }
    utimes(path, nil)  // used now: the last to be pruned
    return answers
  }

  /// Adds `answers` to those stored for `buildID` under `identity`. The file is replaced whole
  /// by a rename, so a reader never sees half of it; a failure to write only loses the answers.
  func store(
    _ answers: [UInt64: [SymbolizerOutput.Entry]], buildID: [UInt8], identity: String
  ) {
    guard !answers.isEmpty else { return }
    let path = file(for: buildID)
    var all = self.answers(buildID: buildID, identity: identity)
    all.merge(answers) { _, new in new }
    guard
      (try? FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true)) != nil
    else { return }
    // Named for this writer alone: two threads of one process may store at once.
    let temporary = "\(directory)/.\(Self.hex(buildID)).\(UInt64.random(in: 0 ... .max)).tmp"
    guard
      FileManager.default.createFile(
        atPath: temporary, contents: Data(Self.encode(all, identity: identity))),
      rename(temporary, path) == 0
    else {
      unlink(temporary)  // a disk that filled may have left part of it
      return
    }
    prune()
  }

  private func file(for buildID: [UInt8]) -> String {
    "\(directory)/\(Self.hex(buildID)).symbols"
  }

  /// Removes the temporary files that writers killed before their rename left, once older than
  /// ``temporaryLifetime``, and the least recently used cache files once there are more than
  /// ``fileLimit``. Only files named as this cache names them count, and go: the directory may
  /// be shared.
  private func prune() {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
      return
    }
    func modified(_ name: String) -> (path: String, time: Int) {
      let path = "\(directory)/\(name)"
      var info = stat()
      return (path, stat(path, &info) == 0 ? info.st_mtim.tv_sec : 0)
    }
    let now = time(nil)
    for file in names.filter(Self.isTemporaryFile).map(modified)
    where file.time < now - Self.temporaryLifetime {
      unlink(file.path)
    }
    let files = names.filter(Self.isCacheFile)
    guard files.count > Self.fileLimit else { return }
    let used = files.map(modified)
    let oldest = used.sorted { $0.time < $1.time }.prefix(files.count - Self.fileLimit * 3 / 4)
    for file in oldest { unlink(file.path) }
  }

  /// Seconds after which a temporary file is taken as left by a writer that died: a live one
  /// renames its file within a moment of making it.
  static let temporaryLifetime = 3_600

  /// Whether `name` is one of this cache's temporary files: a dot, a build ID in hexadecimal, a
  /// dot, a decimal number, then `.tmp`.
  static func isTemporaryFile(_ name: String) -> Bool {
    let parts = name.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 4, parts[0].isEmpty, parts[3] == "tmp" else { return false }
    return !parts[1].isEmpty && parts[1].allSatisfy { $0.isHexDigit && !$0.isUppercase }
      && parts[2].allSatisfy(\.isNumber) && UInt64(parts[2]) != nil
  }

  /// Whether `name` is a cache file's: a build ID in hexadecimal, then `.symbols`.
  static func isCacheFile(_ name: String) -> Bool {
    guard name.hasSuffix(".symbols") else { return false }
    let id = name.dropLast(".symbols".count)
    return !id.isEmpty && id.allSatisfy { $0.isHexDigit && !$0.isUppercase }
  }

  private static let magic = Array("heapline symbols 2\n".utf8)

  /// The file's bytes: the magic line, the FNV-1a checksum of the rest, the identity, then the
  /// answers as a SYMBOLS payload (``StoredSymbols``) of one module.
  static func encode(_ answers: [UInt64: [SymbolizerOutput.Entry]], identity: String) -> [UInt8] {
    var symbols = StoredSymbols()
    // A named module: the payload's reader takes a group only after a string table, and the
    // answers alone (all unknown, say) may have no strings.
    let module = TraceModule(path: "cache", loadBias: 0, segments: [])
    for (address, answer) in answers { symbols.insert(answer, for: module, moduleAddress: address) }
    var body = ByteWriter()
    body.appendLengthPrefixed(Array(identity.utf8))
    body.append(symbols.payload)
    var writer = ByteWriter()
    writer.append(magic)
    writer.appendUInt32(FNV1a.hash(body.bytes))
    writer.append(body.bytes)
    return writer.bytes
  }

  /// The answers in `bytes`, or `nil` when they are damaged or were made under another identity.
  static func decode(_ bytes: [UInt8], identity: String) -> [UInt64: [SymbolizerOutput.Entry]]? {
    guard bytes.starts(with: magic) else { return nil }
    var cursor = ByteCursor(bytes, position: magic.count)
    // A flipped bit could still parse, as another line or name: only a whole file is read.
    guard let checksum = try? cursor.readUInt32(),
      FNV1a.hash(bytes[cursor.position...]) == checksum,
      let made = try? cursor.readLengthPrefixedBytes(), made.elementsEqual(identity.utf8),
      let symbols = try? StoredSymbols(payload: Array(bytes[cursor.position...]))
    else { return nil }
    var answers: [UInt64: [SymbolizerOutput.Entry]] = [:]
    for (key, answer) in symbols.entries { answers[key.address] = answer }
    return answers
  }

  /// `size:seconds.nanoseconds`, and whether it is readable, of the file `path` leads to, or
  /// `nil` if there is none: a debug file made unreadable and readable again keeps its size and
  /// time.
  private static func stamp(_ path: String) -> String? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    let readable = access(path, R_OK) == 0 ? "r" : "-"
    return "\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec):\(readable)"
  }

  static func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
  }
}
