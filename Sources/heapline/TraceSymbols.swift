import HeaplineTrace
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// What `record` does last: symbolizes every frame of the finished trace while the program's
/// files are those it ran, and stores the symbols in a SYMBOLS chunk before the trailer, so
/// that a report made after a rebuild still names the right functions (heaptrack's interpreter
/// does the same).
///
/// The trace is rewritten into a temporary file beside it and renamed into place: a failure
/// leaves the trace as the shim finished it, which reads as before, symbolized at report time.
enum TraceSymbols {
  /// Stores the symbols of the complete trace at `path`; returns how many addresses were
  /// stored, or `nil` when the trace was left as it was (incomplete, already symbolized, no
  /// symbolizer, or a failure to rewrite it).
  @discardableResult
  static func store(in path: String, symbolizer: Symbolizer) -> Int? {
    guard symbolizer.toolPath != nil, let reader = try? TraceReader(path: path),
      let trailer = reader.trailerChunk, reader.symbolChunks.isEmpty
    else { return nil }
    guard let (pcs, modules) = stackPCs(of: reader) else { return nil }
    let symbols = symbolizer.storedSymbols(for: pcs, modules: modules)
    guard symbols.count > 0 else { return nil }
    // Compressed hard: written once, and names are most of a small trace. Level 15, not 19:
    // as small to a few bytes on the benchmarks' symbols (32,075 B against 32,071 for Python's
    // 83 KB), in a third of the time (6 ms against 17, paid by every recording).
    let payload = symbols.payload
    let stored = Zstd.compress(payload, level: 15)
    let compressed = stored.count < payload.count
    var header = ChunkHeader(
      offset: trailer.offset, kind: .symbols, encoding: compressed ? .zstd : .raw, threadSerial: 0,
      threadID: 0, storedLength: UInt32(compressed ? stored.count : payload.count),
      rawLength: UInt32(payload.count), baseTime: reader.trailer?.endTime ?? 0,
      firstAllocCounter: 0, recordCount: 1, checksum: 0)
    header.seal(over: compressed ? stored : payload)
    guard
      rewrite(path, keeping: trailer.offset, then: header.encoded + (compressed ? stored : payload))
    else {
      return nil
    }
    return symbols.count
  }

  /// The return addresses of every stack of the trace, and its modules (in file order, so that
  /// a module mapped again after `dlopen` comes last and wins), read by two threads at once
  /// (the program has exited, so both cores are free) from the chunks that may hold them: the
  /// shim flags the others, nine in ten of a busy program's, and they are not even read.
  private static func stackPCs(of reader: TraceReader) -> (Set<UInt64>, [TraceModule])? {
    let chunks = reader.chunks.filter { !$0.flags.contains(.noStacksOrModules) }
    let halves = [chunks[..<(chunks.count / 2)], chunks[(chunks.count / 2)...]]
    let parts = Mutex<[(returnAddresses: Set<UInt64>, modules: [TraceModule])?]>([nil, nil])
    let read = { (half: Int) in
      let part = try? reader.stacksAndModules(of: halves[half])
      parts.withLock { $0[half] = part }
    }
    // A thread of its own, not Dispatch: libdispatch traps when it cannot open its descriptors
    // (a program run under `ulimit -n 16`, whose limit `record` shares).
    let job = Unmanaged.passRetained(Job { read(0) })
    var thread = pthread_t()
    let started =
      pthread_create(
        &thread, nil,
        { raw in
          Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue().body()
          return nil
        }, job.toOpaque()) == 0
    if !started {
      job.release()
      read(0)
    }
    read(1)
    if started { pthread_join(thread, nil) }
    let both = parts.withLock { $0 }
    guard let first = both[0], let second = both[1] else { return nil }
    let pcs = first.returnAddresses.union(second.returnAddresses)
    var metadata = TraceMetadata()
    for module in first.modules + second.modules { metadata.addModule(module) }
    return (pcs, metadata.modules)
  }

  /// Work for a thread that `pthread_create` starts.
  private final class Job: @unchecked Sendable {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
  }

  /// Copies `path` up to `offset`, then `inserted`, then the rest of the file (the trailer)
  /// to a temporary file beside it, and renames that over `path`.
  private static func rewrite(_ path: String, keeping offset: UInt64, then inserted: [UInt8])
    -> Bool
  {
    let source = open(path, O_RDONLY | O_CLOEXEC)
    guard source >= 0 else { return false }
    defer { close(source) }
    var status = stat()
    guard fstat(source, &status) == 0 else { return false }
    var template = Array((path + ".symbols-XXXXXX").utf8CString)
    let target = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard target >= 0 else { return false }
    let temporary = String(
      decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    var done = false
    defer {
      close(target)
      if !done { unlink(temporary) }
    }
    guard copy(source, from: 0, count: offset, to: target), write(inserted, to: target),
      copy(source, from: offset, count: UInt64(status.st_size) - offset, to: target),
      fchmod(target, status.st_mode & 0o7777) == 0, fsync(target) == 0,
      rename(temporary, path) == 0
    else {
      // The trace is whole without them, but a report after a rebuild would name the wrong
      // functions: said, not silent.
      CLIOutput.warning(
        "the symbols could not be stored in '\(path)' (\(String(cString: strerror(errno)))): "
          + "reports will read them from the program's files as they are then")
      return false
    }
    done = true
    return true
  }

  private static func copy(_ source: Int32, from offset: UInt64, count: UInt64, to target: Int32)
    -> Bool
  {
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var done: UInt64 = 0
    while done < count {
      let want = Int(min(UInt64(buffer.count), count - done))
      let got = buffer.withUnsafeMutableBytes {
        pread(source, $0.baseAddress, want, off_t(offset + done))
      }
      if got < 0 && errno == EINTR { continue }
      guard got > 0, write(Array(buffer[0..<got]), to: target) else { return false }
      done += UInt64(got)
    }
    return true
  }

  private static func write(_ bytes: [UInt8], to target: Int32) -> Bool {
    var written = 0
    while written < bytes.count {
      let result = bytes.withUnsafeBytes {
        Glibc.write(target, $0.baseAddress! + written, bytes.count - written)
      }
      if result < 0 && errno == EINTR { continue }
      guard result > 0 else { return false }
      written += result
    }
    return true
  }
}
