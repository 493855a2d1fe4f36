import Glibc

/// The memory that `heapline record` shares with the shim in the program it runs, and the
/// recovery of a trace whose program ended before the shim could finish it.
///
/// The shim keeps every thread's buffer in this memory, and, beside them, the commit: how far
/// the trace file is whole. When the program ends by `_exit`, `abort`, a crash, a kill or
/// `exec`, the shim's destructor never runs; ``recover(trace:exitStatus:)`` then writes every
/// whole record the buffers still hold and the trailer, so that nothing recorded is lost. The
/// layout is in <doc:TraceFormat>, "Shared buffers".
///
/// ```swift
/// let shared = try SharedBuffers()
/// // run the program with HEAPLINE_SHARED=shared.pathForChild
/// if let recovery = try shared.recover(trace: path, exitStatus: 134) { print(recovery) }
/// ```
package final class SharedBuffers {
  /// Where the program's shim finds the memory: this process's descriptor, through /proc.
  package let pathForChild: String
  private let descriptor: Int32

  /// What ``recover(trace:exitStatus:)`` wrote.
  package struct Recovery: Sendable, Equatable {
    /// Chunks written from the buffers.
    package var chunks: Int
    /// ALLOC and FREE records among them.
    package var allocs: UInt64
    package var frees: UInt64
    /// The trailer written after them.
    package var trailer: TraceTrailer
  }

  /// Makes the memory: an unnamed file in /dev/shm (memory, not disk), or in the temporary
  /// directory when there is no /dev/shm.
  package init() throws(TraceError) {
    var made: Int32 = -1
    let tmp = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    for directory in ["/dev/shm", tmp] {
      var template = Array("\(directory)/heapline-shared-XXXXXX".utf8CString)
      let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
      if fd >= 0 {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // the program must not inherit it
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        made = fd
        break
      }
    }
    guard made >= 0 else {
      throw TraceError(
        path: "/dev/shm", reason: .cannotOpen("shared buffers: \(String(cString: strerror(errno)))")
      )
    }
    descriptor = made
    pathForChild = "/proc/\(getpid())/fd/\(made)"
  }

  deinit { close(descriptor) }

  /// Whether the shim in the program attached to this memory: it loaded and recorded.
  package var shimStarted: Bool {
    let header = read(at: 0, count: 8)
    return header == Layout.magic
  }

  /// Whether the shim loaded but found that the program's malloc is not its own: the program
  /// defines the allocator itself, or links one in statically.
  package var programHasOwnMalloc: Bool {
    read(at: 0, count: 8) == Layout.ownMallocMagic
  }

  /// The shared library whose allocator the program uses, when ``programHasOwnMalloc`` comes
  /// from one (jemalloc, tcmalloc, mimalloc) rather than from the program itself.
  package var programMallocLibrary: String? {
    guard programHasOwnMalloc else { return nil }
    let name = read(at: 8, count: 64).prefix { $0 != 0 }
    return name.isEmpty ? nil : String(decoding: name, as: UTF8.self)
  }

  /// Whether the last recording ended for an `exec` and no program started one after it: the
  /// program that the process became did not load the preload library.
  package var endedForExec: Bool {
    let header = read(at: 0, count: 32)
    return header.count == 32 && Array(header[0..<8]) == Layout.magic
      && le32(header, 28) == Layout.execed
  }

  /// The traces that programs before an `exec` left: how many, and the numbers N of the first
  /// and the last `PATH.N`; `nil` when the program never ran `exec`.
  package var execTraces: (count: UInt32, first: UInt32, last: UInt32)? {
    let header = read(at: 0, count: Layout.headerReadBytes)
    guard header.count == Layout.headerReadBytes, Array(header[0..<8]) == Layout.magic,
      le32(header, 140) > 0
    else { return nil }
    return (le32(header, 140), le32(header, 144), le32(header, 148))
  }

  /// Finishes `trace` when the shim could not: returns `nil` when there is nothing to do (the
  /// shim wrote its trailer, or never started). A trace whose writes failed keeps that as its
  /// end reason, with what the buffers held when recording stopped.
  package func recover(trace path: String, exitStatus: UInt32) throws(TraceError) -> Recovery? {
    let header = read(at: 0, count: Layout.headerReadBytes)
    guard header.count == Layout.headerReadBytes, Array(header[0..<8]) == Layout.magic,
      le32(header, 8) == Layout.version,
      le32(header, 28) == Layout.recording || le32(header, 28) == Layout.failed
    else { return nil }
    let failed = le32(header, 28) == Layout.failed
    let headerBytes = UInt64(le32(header, 12))
    let slotBytes = UInt64(le32(header, 16))
    let dataOffset = UInt64(le32(header, 20))
    let sideOffset = UInt64(le32(header, 152))
    let slots = le32(header, 24)
    let commit = Int(40 + (le64(header, 32) & 1) * 32)
    let committedOffset = le64(header, commit)
    var lost: UInt64 = 0
    for reason in 1..<4 { lost &+= le64(header, 104 + 8 * reason) }
    // The shim's own (reopened, categories full) and whether a buffer was outside this memory
    let shimFlags = le32(header, 136) & 14

    let file = open(path, O_RDWR | O_CLOEXEC)
    guard file >= 0 else {
      throw TraceError(path: path, reason: .cannotOpen(String(cString: strerror(errno))))
    }
    defer { close(file) }
    let fileHeader = pread(file, count: TraceConstants.fileHeaderSize, at: 0)
    guard fileHeader.count == TraceConstants.fileHeaderSize,
      committedOffset >= UInt64(TraceConstants.fileHeaderSize)
    else { return nil }
    // What lies past the commit is a chunk whose write did not finish: its buffer still has it.
    guard ftruncate(file, off_t(committedOffset)) == 0 else {
      throw TraceError(path: path, reason: .writeFailed(offset: committedOffset, errorText()))
    }
    var recovery = Recovery(
      chunks: 0, allocs: 0, frees: 0,
      trailer: TraceTrailer(endTime: 0, eventChunkCount: 0, allocCount: 0, freeCount: 0))
    var end = committedOffset
    for slot in 0..<UInt64(slots) {
      let base = headerBytes + slot * slotBytes
      guard
        let chunk = recoverSlot(
          at: base, dataOffset: dataOffset, sideOffset: sideOffset, committed: committedOffset)
      else { continue }
      var bytes = chunk.header.encoded
      bytes += chunk.stored
      guard pwrite(file, bytes, at: end) else {
        throw TraceError(path: path, reason: .writeFailed(offset: end, errorText()))
      }
      end += UInt64(bytes.count)
      recovery.chunks += 1
      recovery.allocs += chunk.allocs
      recovery.frees += chunk.frees
    }
    let startTime = le64(fileHeader, 16)
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let nowNanoseconds = UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    recovery.trailer = TraceTrailer(
      endTime: nowNanoseconds > startTime ? nowNanoseconds - startTime : 0,
      eventChunkCount: le64(header, commit + 8) + UInt64(recovery.chunks),
      allocCount: le64(header, commit + 16) + recovery.allocs,
      freeCount: le64(header, commit + 24) + recovery.frees,
      endReason: failed ? .writeFailed : .endedUnfinished,
      exitStatus: exitStatus, lostEvents: lost,
      flags: TraceTrailer.Flags(rawValue: shimFlags).union(.writtenByRecorder),
      recoveredChunkCount: UInt32(recovery.chunks))
    let payload = recovery.trailer.encoded
    var trailer = ChunkHeader(
      offset: end, kind: .trailer, encoding: .raw, threadSerial: 0, threadID: 0,
      storedLength: UInt32(payload.count), rawLength: UInt32(payload.count),
      baseTime: recovery.trailer.endTime, firstAllocCounter: 0, recordCount: 0, checksum: 0)
    trailer.seal(over: payload)
    guard pwrite(file, trailer.encoded + payload, at: end) else {
      throw TraceError(path: path, reason: .writeFailed(offset: end, errorText()))
    }
    return recovery
  }

  /// The chunk that one buffer's whole records make, with the allocation it still held back;
  /// `nil` for a buffer that is empty, handed back, or already in the file.
  private func recoverSlot(
    at base: UInt64, dataOffset: UInt64, sideOffset: UInt64, committed: UInt64
  )
    -> (header: ChunkHeader, stored: [UInt8], allocs: UInt64, frees: UInt64)?
  {
    let slot = read(at: base, count: Int(dataOffset))
    guard slot.count == Int(dataOffset), le32(slot, 0) != Layout.bufferFree else { return nil }
    let inflight = le64(slot, 40)
    // Written before the end, or (1) after a chunk that the trace lost, whose INFOs it names
    if inflight != 0 && inflight - 1 < committed { return nil }
    let length = Int(le32(slot, 12))
    let sideLength = Int(le32(slot, 104))
    guard length <= Layout.maximumBufferBytes, sideLength <= Layout.maximumBufferBytes else {
      return nil
    }
    var events = length > 0 ? read(at: base + dataOffset, count: length) : []
    var side = sideLength > 0 ? read(at: base + sideOffset, count: sideLength) : []
    let firstAlloc = le64(slot, 16)
    let hasTime = le32(slot, 32) != 0
    let pendingValid = le32(slot, 88) != 0
    let pendingTime = le64(slot, 64)
    let baseTime = hasTime ? le64(slot, 24) : (pendingValid ? pendingTime : le64(slot, 96))
    var summary = ChunkCursor.summarize(side: side, events: events, baseTime: baseTime)
    events.removeSubrange(summary.eventBytes...)
    side.removeSubrange(summary.sideBytes...)
    // The thread's last allocation waits in the buffer until its next call: write it too,
    // unless the records already hold it, with every field spelled out (its INFO may be in an
    // earlier chunk), after a TICK to its time.
    let counter = le64(slot, 72)
    if pendingValid && counter == firstAlloc + summary.allocs {
      let size = le64(slot, 56)
      let category = le32(slot, 84)
      var writer = ByteWriter()
      if pendingTime > summary.time {
        writer.appendUInt8(RecordTag.tick.rawValue)
        writer.appendVarint(UInt64(summary.eventRecords - summary.lastTick))
        writer.appendVarint(pendingTime - summary.time)
        side += writer.bytes
        summary.records += 1
        writer = ByteWriter()
      }
      writer.appendUInt8(RecordTag.allocExplicit.rawValue)
      writer.appendVarint(size)
      writer.appendVarint(UInt64(le32(slot, 80)))
      writer.appendVarint(UInt64(category != 0 ? category : SizeClass(containing: size).index))
      writer.appendVarint(le64(slot, 48))
      events += writer.bytes
      summary.records += 1
      summary.allocs += 1
    }
    guard summary.records > 0 else { return nil }
    var payload: [UInt8] = []
    var flags: ChunkFlags = summary.stackRecords == 0 ? .noStacksOrModules : []
    if !side.isEmpty {
      var prefix = ByteWriter()
      prefix.appendVarint(UInt64(side.count))
      payload = prefix.bytes + side
      flags.insert(.sideSection)
    }
    payload += events
    let stored = Zstd.compress(payload)
    let compressed = stored.count < payload.count
    var header = ChunkHeader(
      offset: 0, kind: .events, encoding: compressed ? .zstd : .raw, threadSerial: le32(slot, 4),
      threadID: le32(slot, 8), storedLength: UInt32(compressed ? stored.count : payload.count),
      rawLength: UInt32(payload.count), baseTime: baseTime, firstAllocCounter: firstAlloc,
      recordCount: summary.records, checksum: 0, flags: flags)
    header.seal(over: compressed ? stored : payload)
    return (header, compressed ? stored : payload, summary.allocs, summary.frees)
  }

  private enum Layout {
    static let magic = Array("HLSHARED".utf8)
    static let ownMallocMagic = Array("HLOWNMAL".utf8)
    static let version: UInt32 = 2
    static let headerReadBytes = 156
    static let recording: UInt32 = 1
    static let failed: UInt32 = 3
    static let execed: UInt32 = 4
    static let bufferFree: UInt32 = 0
    static let maximumBufferBytes = 1 << 22
  }

  private func read(at offset: UInt64, count: Int) -> [UInt8] {
    pread(descriptor, count: count, at: offset)
  }

  private func pread(_ fd: Int32, count: Int, at offset: UInt64) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var done = 0
    while done < count {
      let n = bytes.withUnsafeMutableBytes {
        Glibc.pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done))
      }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { break }
      done += n
    }
    return Array(bytes[0..<done])
  }

  private func pwrite(_ fd: Int32, _ bytes: [UInt8], at offset: UInt64) -> Bool {
    var done = 0
    while done < bytes.count {
      let n = bytes.withUnsafeBytes {
        Glibc.pwrite(fd, $0.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
      }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { return false }
      done += n
    }
    return true
  }

  private func errorText() -> String { String(cString: strerror(errno)) }
}

private func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
  (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * $1) }
}

private func le64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
  (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * $1) }
}
