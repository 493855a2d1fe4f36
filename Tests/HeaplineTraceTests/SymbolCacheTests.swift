import Foundation
import Testing

@testable import HeaplineTrace

@Suite(
  "Symbolizer answers kept between runs, by build ID",
  .enabled(if: Symbolizer.locateTool() != nil))
struct SymbolCacheTests {
  /// A scratch cache, a tool that counts its runs before it runs the real one, and an address
  /// in this process's C library (a module with a build ID and, here, separate debug info).
  struct Setup {
    let directory: String
    let cache: SymbolCache
    let tool: String
    let runs: String
    let libc: TraceModule
    let pc: UInt64

    init() throws {
      directory = try Self.temporaryDirectory()
      cache = SymbolCache(directory: directory + "/cache")
      runs = directory + "/runs"
      tool = directory + "/tool"
      try Self.writeTool(at: tool, counting: runs, note: "")
      let function = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "strtol"))
      pc = UInt64(UInt(bitPattern: function)) + 1  // as a return address inside it
      libc = try #require(
        try Self.module(containing: pc), "no mapping of this process holds strtol")
    }

    /// A symbolizer that runs the counting tool, with the scratch cache.
    var symbolizer: Symbolizer { Symbolizer(toolPath: tool, cache: cache) }

    /// How many times the tool has run.
    func toolRuns() -> Int { lines(of: runs) }

    /// How many addresses the tool has been asked about, over all its runs.
    func toolQueries() -> Int { lines(of: runs + ".queries") }

    private func lines(of path: String) -> Int {
      ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    /// Makes the cache directory holding empty files named `names`; returns the directory.
    func cacheDirectory(holding names: [String]) throws -> String {
      let directory = cache.directory
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      for name in names {
        #expect(FileManager.default.createFile(atPath: "\(directory)/\(name)", contents: Data()))
      }
      return directory
    }

    /// Removes the scratch directory.
    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    var file: String { "\(cache.directory)/\(SymbolCache.hex(libc.buildID)).symbols" }

    static func writeTool(at path: String, counting runs: String, note: String) throws {
      let real = try #require(Symbolizer.locateTool())
      // Each run is counted, and the addresses it is asked about are kept.
      let script = """
        #!/bin/sh
        # \(note)
        echo run >> '\(runs)'
        input='\(runs).input'
        cat > "$input"
        cat "$input" >> '\(runs).queries'
        exec '\(real)' "$@" < "$input"

        """
      try Data(script.utf8).write(to: URL(fileURLWithPath: path))
      try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
    }

    static func temporaryDirectory() throws -> String {
      let path = NSTemporaryDirectory() + "/heapline-symbol-cache-" + UUID().uuidString
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
      return path
    }

    /// The module of this process whose mapping holds `pc`, with its load bias and build ID.
    static func module(containing pc: UInt64) throws -> TraceModule? {
      // Read to the end: Foundation reads a file that stat calls empty, as /proc's are, with one
      // read(2), which stops at a page of whole lines.
      let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/maps"))
      let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
      var bias: [String: UInt64] = [:]
      for line in maps.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 6, fields[5].hasPrefix("/") else { continue }
        let range = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
        let path = String(fields[5])
        if UInt64(fields[2], radix: 16) == 0, bias[path] == nil { bias[path] = range[0] }
        if range[0] <= pc, pc < range[1], let base = bias[path] {
          let buildID = try #require(ELFBuildID.read(path: path))
          return TraceModule(
            path: path, loadBias: base, segments: [.init(start: 0, size: 1 << 40)],
            buildID: buildID)
        }
      }
      return nil
    }
  }

  @Test("a second lookup answers from the cache, the same as the tool, without running it")
  func secondLookupSkipsTheTool() throws {
    // Given the answer of the tool with no cache, and a cache that has seen the address once
    let setup = try Setup()
    defer { setup.remove() }
    let truth = Symbolizer(toolPath: setup.tool).symbolize([setup.pc], modules: [setup.libc])
    let first = setup.symbolizer.symbolize([setup.pc], modules: [setup.libc])
    #expect(setup.toolRuns() == 2)
    // When it is symbolized again, and its symbols are made for a trace
    let second = setup.symbolizer.symbolize([setup.pc], modules: [setup.libc])
    let stored = setup.symbolizer.storedSymbols(for: [setup.pc], modules: [setup.libc])
    // Then the tool did not run again, and every answer is the tool's
    #expect(setup.toolRuns() == 2)
    #expect(first == truth)
    #expect(second == truth)
    #expect(truth[setup.pc]?.last?.function != nil)  // one of strtol's names
    let fromTool = Symbolizer(toolPath: setup.tool).storedSymbols(
      for: [setup.pc], modules: [setup.libc])
    #expect(stored.payload == fromTool.payload)
    #expect(stored.count == 1)
  }

  @Test("another tool, or a damaged file, is a miss that the tool's answer then replaces")
  func changedToolOrDamagedFileMisses() throws {
    // Given a cache that holds the address
    let setup = try Setup()
    defer { setup.remove() }
    let truth = setup.symbolizer.symbolize([setup.pc], modules: [setup.libc])
    #expect(setup.toolRuns() == 1)
    // When the tool's file changes, the tool runs again
    try Setup.writeTool(at: setup.tool, counting: setup.runs, note: "a newer toolchain")
    #expect(setup.symbolizer.symbolize([setup.pc], modules: [setup.libc]) == truth)
    #expect(setup.toolRuns() == 2)
    // and when the file is damaged, it runs again and the file is whole once more
    let whole = try Data(contentsOf: URL(fileURLWithPath: setup.file))
    try whole.prefix(whole.count - 3).write(to: URL(fileURLWithPath: setup.file))
    #expect(setup.symbolizer.symbolize([setup.pc], modules: [setup.libc]) == truth)
    #expect(setup.toolRuns() == 3)
    #expect(try Data(contentsOf: URL(fileURLWithPath: setup.file)) == whole)
    #expect(setup.symbolizer.symbolize([setup.pc], modules: [setup.libc]) == truth)
    #expect(setup.toolRuns() == 3)
    // and a flipped bit, which could still parse as another line or name, is a miss as well
    var flipped = whole
    flipped[whole.count - 2] ^= 0x01
    try flipped.write(to: URL(fileURLWithPath: setup.file))
    #expect(setup.symbolizer.symbolize([setup.pc], modules: [setup.libc]) == truth)
    #expect(setup.toolRuns() == 4)
  }

  @Test("one build ID at two paths: each file answers for itself, never with the other's answers")
  func sameBuildIDAtTwoPaths() throws {
    // Given two copies of the C library, one older, mapped at two places, and a cache that
    // knows the address in the first
    let setup = try Setup()
    defer { setup.remove() }
    var copies: [TraceModule] = []
    for (index, age) in [0.0, 3600.0].enumerated() {
      let path = "\(setup.directory)/copy\(index).so"
      try FileManager.default.copyItem(atPath: setup.libc.path, toPath: path)
      try FileManager.default.setAttributes(
        [.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: path)
      var module = setup.libc
      module.path = path
      module.loadBias += UInt64(index) << 36
      copies.append(module)
    }
    let offset = setup.pc - setup.libc.loadBias
    let pcs = copies.map { $0.loadBias + offset }
    _ = setup.symbolizer.storedSymbols(for: [pcs[0]], modules: copies)
    #expect(setup.toolQueries() == 1)
    // When both are symbolized at once (in either order: a set's)
    let both = setup.symbolizer.storedSymbols(for: pcs, modules: copies)
    // Then the tool was asked about the second alone: the first answered from its own entry,
    // and the second not from the first's
    #expect(setup.toolQueries() == 2)
    #expect(both.count == 2)
  }

  @Test("the identity changes with a debug file by debug link, and with the tool's environment")
  func identityFollowsDebugFilesAndEnvironment() throws {
    // Given a copy of the C library, whose debug link names a separate debug file
    let setup = try Setup()
    defer { setup.remove() }
    let path = "\(setup.directory)/libc.so.6"
    try FileManager.default.copyItem(atPath: setup.libc.path, toPath: path)
    let link = try #require(ELFDebugInfo.read(path: path)?.debugLink)
    #expect(link.hasSuffix(".debug"))
    func identity(_ environment: [String: String] = [:]) -> String? {
      SymbolCache.identity(
        tool: setup.tool, path: path, buildID: setup.libc.buildID, environment: environment)
    }
    let before = try #require(identity())
    // When a debug file appears where the tool looks for it: beside the module, then in .debug
    #expect(FileManager.default.createFile(atPath: "\(setup.directory)/\(link)", contents: Data([1])))
    let beside = try #require(identity())
    try FileManager.default.createDirectory(
      atPath: "\(setup.directory)/.debug", withIntermediateDirectories: true)
    #expect(
      FileManager.default.createFile(
        atPath: "\(setup.directory)/.debug/\(link)", contents: Data([1, 2])))
    let inDebug = try #require(identity())
    // Then each is another identity
    #expect(Set([before, beside, inDebug]).count == 3)
    #expect(identity(["UNRELATED": "1"]) == inDebug)
    // and none is kept for a tool told where else to look, a module without a build ID, or a
    // path the tool's input cannot spell (it is asked about another file)
    #expect(identity(["LLVM_SYMBOLIZER_OPTS": "--debug-file-directory=/elsewhere"]) == nil)
    #expect(identity(["DEBUGINFOD_URLS": "https://debuginfod.example"]) == nil)
    #expect(
      SymbolCache.identity(tool: setup.tool, path: path, buildID: [], environment: [:]) == nil)
    let quoted = "\(setup.directory)/a\"b.so"
    try FileManager.default.copyItem(atPath: path, toPath: quoted)
    #expect(
      SymbolCache.identity(
        tool: setup.tool, path: quoted, buildID: setup.libc.buildID, environment: [:]) == nil)
  }

  @Test("a DWARF 5 skeleton unit anywhere in .debug_info marks split DWARF; full units do not")
  func findsSkeletonUnits() {
    /// A unit of `length` bytes after its length field: version 5, then `type`, then zeros.
    func unit(type: UInt8, length: UInt32 = 20) -> [UInt8] {
      withUnsafeBytes(of: length.littleEndian, Array.init) + [5, 0, type]
        + [UInt8](repeating: 0, count: Int(length) - 3)
    }
    func split(_ section: [UInt8]) -> Bool {
      ELFDebugInfo.hasSkeletonUnit(size: UInt64(section.count)) { at in
        let padded = section + [UInt8](repeating: 0, count: 15)
        return Array(padded[Int(at)..<Int(at) + 15])
      }
    }
    let compile: UInt8 = 0x01, skeleton: UInt8 = 0x04
    #expect(!split(unit(type: compile) + unit(type: compile, length: 40)))
    #expect(split(unit(type: compile) + unit(type: skeleton)))
    #expect(!split([]))
    // A unit whose length runs past the section's end cannot be walked past: split, to be safe
    #expect(split(unit(type: compile) + Array(unit(type: compile).prefix(10))))
  }

  @Test("a module without a build ID is not cached")
  func noBuildIDNoCache() throws {
    let setup = try Setup()
    defer { setup.remove() }
    var module = setup.libc
    module.buildID = []
    let first = setup.symbolizer.symbolize([setup.pc], modules: [module])
    let second = setup.symbolizer.symbolize([setup.pc], modules: [module])
    #expect(first == second)
    #expect(setup.toolRuns() == 2)
    #expect(!FileManager.default.fileExists(atPath: setup.cache.directory))
  }

  @Test("past the file limit, the least recently used files go, down to three quarters of it")
  func prunesLeastRecentlyUsed() throws {
    // Given a full cache of old files, and one that was used a minute ago
    let setup = try Setup()
    defer { setup.remove() }
    let names = (0..<SymbolCache.fileLimit).map { String(format: "%040x", $0) + ".symbols" }
    let directory = try setup.cacheDirectory(holding: names)
    for (index, name) in names.enumerated() {
      let when = Date(timeIntervalSinceNow: index == 7 ? -60 : -86_400)
      try FileManager.default.setAttributes(
        [.modificationDate: when], ofItemAtPath: "\(directory)/\(name)")
    }
    // When an answer is stored
    _ = setup.symbolizer.symbolize([setup.pc], modules: [setup.libc])
    // Then three quarters of the limit are left: the new file, the recent one, and old ones
    let left = try FileManager.default.contentsOfDirectory(atPath: directory)
    #expect(left.count == SymbolCache.fileLimit * 3 / 4)
    #expect(left.contains(SymbolCache.hex(setup.libc.buildID) + ".symbols"))
    #expect(left.contains(names[7]))
  }

  @Test("a shared directory's other files neither count toward the limit nor go")
  func pruneLeavesOtherFiles() throws {
    // Given a directory crowded with files that are not the cache's, some named like it
    let setup = try Setup()
    defer { setup.remove() }
    let others = (0..<300).map { "notes\($0).txt" } + ["README.symbols", "ABCD.symbols", ".symbols"]
    let directory = try setup.cacheDirectory(holding: others)
    // When an answer is stored, then looked up again
    let first = setup.symbolizer.symbolize([setup.pc], modules: [setup.libc])
    let second = setup.symbolizer.symbolize([setup.pc], modules: [setup.libc])
    // Then every other file is still there, and the cache works beside them
    let names = Set(try FileManager.default.contentsOfDirectory(atPath: directory))
    #expect(names == Set(others + [SymbolCache.hex(setup.libc.buildID) + ".symbols"]))
    #expect(first == second)
    #expect(setup.toolRuns() == 1)
    #expect(SymbolCache.isCacheFile("0a1b.symbols"))
    #expect(!SymbolCache.isCacheFile("0A1B.symbols"))
    #expect(!SymbolCache.isCacheFile(".0a1b.123.tmp"))
  }

  @Test("temporary files that killed writers left go once an hour old; fresh ones and others stay")
  func removesStaleTemporaryFiles() throws {
    // Given a writer's temporary file from two hours ago, one from a minute ago, and files
    // that are not the cache's but look alike
    let setup = try Setup()
    defer { setup.remove() }
    let stale = ".0a1b2c.1234567890.tmp", fresh = ".0a1b2c.987.tmp"
    let others = [".0A1B.5.tmp", ".0a1b.x5.tmp", ".0a1b.5.tmp.keep", "0a1b.5.tmp", ".0a1b..tmp"]
    let directory = try setup.cacheDirectory(holding: [stale, fresh] + others)
    for (name, age) in [(stale, 7_200.0), (fresh, 60)] + others.map({ ($0, 86_400.0) }) {
      try FileManager.default.setAttributes(
        [.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: "\(directory)/\(name)")
    }
    // When an answer is stored
    _ = setup.symbolizer.symbolize([setup.pc], modules: [setup.libc])
    // Then only the stale temporary file is gone
    let names = Set(try FileManager.default.contentsOfDirectory(atPath: directory))
    #expect(names == Set([fresh] + others + [SymbolCache.hex(setup.libc.buildID) + ".symbols"]))
    #expect(SymbolCache.isTemporaryFile(stale))
    #expect(!others.contains(where: SymbolCache.isTemporaryFile))
  }

  @Test("HEAPLINE_SYMBOL_CACHE names the directory or, empty, turns it off; else XDG, else HOME")
  func standardDirectory() {
    #expect(SymbolCache.standard(environment: ["HEAPLINE_SYMBOL_CACHE": ""]) == nil)
    #expect(
      SymbolCache.standard(environment: ["HEAPLINE_SYMBOL_CACHE": "/c", "HOME": "/h"])?.directory
        == "/c")
    #expect(
      SymbolCache.standard(environment: ["XDG_CACHE_HOME": "/x", "HOME": "/h"])?.directory
        == "/x/heapline/symbols")
    #expect(
      SymbolCache.standard(environment: ["HOME": "/h"])?.directory == "/h/.cache/heapline/symbols")
    #expect(SymbolCache.standard(environment: [:]) == nil)
  }
}
