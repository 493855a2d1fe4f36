extension TraceReader {
  /// What walking the chunk headers found.
  struct Index {
    var chunks: [ChunkHeader] = []
    var symbolChunks: [ChunkHeader] = []
    var trailer: TraceTrailer?
    var trailerChunk: ChunkHeader?
    var cut: CutShort?
    /// For each chunk with a later chunk of the same thread: that chunk's first alloc counter.
    var nextAllocCounter: [UInt64: UInt64] = [:]
  }

  /// Checks magic, version, header size and checksum, and decodes the file header.
  static func readFileHeader(_ file: TraceFile) throws(TraceError) -> (TraceHeader, Int) {
    func fail(_ reason: TraceError.Reason) -> TraceError {
      TraceError(path: file.path, reason: reason)
    }
    guard file.size > 0 else { throw fail(.emptyFile) }
    let available = Int(min(file.size, UInt64(TraceConstants.fileHeaderSize)))
    let bytes = try file.read(at: 0, count: available)
    var cursor = ByteCursor(bytes)
    // Check the magic first: a short file that is not a trace should say so, not "truncated".
    let magicLength = TraceConstants.fileMagic.count
    let magic = (try? cursor.readBytes(min(magicLength, available))) ?? []
    guard magic.elementsEqual(TraceConstants.fileMagic.prefix(magic.count)) else {
      throw fail(.badMagic)
    }
    guard available == TraceConstants.fileHeaderSize else {
      throw fail(.truncatedFileHeader(remaining: file.size))
    }
    do {
      let version = try cursor.readUInt16()
      guard (TraceConstants.oldestReadableVersion...TraceConstants.version).contains(version)
      else { throw fail(.unsupportedVersion(version)) }
      let headerSize = try cursor.readUInt16()
      guard Int(headerSize) == TraceConstants.fileHeaderSize else {
        throw fail(.badHeaderSize(headerSize))
      }
      let header = try TraceHeader(fields: &cursor, version: version)
      let stored = try cursor.readUInt32()
      guard stored == FNV1a.hash(bytes.prefix(TraceConstants.checksumOffset)) else {
        throw fail(.headerChecksumMismatch)
      }
      return (header, Int(headerSize))
    } catch let error as TraceError {
      throw error
    } catch {
      // The 48 bytes were checked above, so the fields cannot run short.
      throw fail(.truncatedFileHeader(remaining: file.size))
    }
  }

  /// Walks the chunks from `start` to the end of the file, checking each one whole (header
  /// fields and checksum) and the order of each thread's chunks; a partial chunk at the end is
  /// a cut, not an error, unless a trailer follows it.
  static func indexChunks(_ file: TraceFile, from start: UInt64) throws(TraceError) -> Index {
    var index = Index()
    var offset = start
    while offset < file.size {
      guard let (chunk, payload) = try readChunk(file, at: offset) else {
        index.cut = CutShort(offset: offset, bytes: file.size - offset)
        break
      }
      if chunk.kind == .trailer {
        let trailer = try decodeTrailer(payload, chunk, path: file.path)
        guard chunk.endOffset == file.size else {
          throw TraceError(
            path: file.path,
            reason: .dataAfterTrailer(trailer: chunk.offset, extra: file.size - chunk.endOffset))
        }
        try checkCounts(index.chunks, against: trailer, at: chunk.offset, path: file.path)
        index.trailer = trailer
        index.trailerChunk = chunk
        break
      }
      if chunk.kind == .symbols {
        index.symbolChunks.append(chunk)
      } else {
        index.chunks.append(chunk)
      }
      offset = chunk.endOffset
    }
    index.nextAllocCounter = try threadOrder(of: index.chunks, path: file.path)
    return index
  }

  /// Puts each thread's chunks in the order the thread wrote them (by first alloc counter,
  /// then base time, then file order: the merge never depends on the order in which chunks
  /// reach the file), checks that base times never go back along it, and returns for each
  /// chunk the first alloc counter of the one after it, which the chunk must end at.
  private static func threadOrder(of chunks: [ChunkHeader], path: String) throws(TraceError)
    -> [UInt64: UInt64]
  {
    var next: [UInt64: UInt64] = [:]
    let threads = Dictionary(grouping: chunks, by: \.threadSerial)
    for serial in threads.keys.sorted() {
      let ordered = threads[serial]!.sorted {
        ($0.firstAllocCounter, $0.baseTime, $0.offset) < (
          $1.firstAllocCounter, $1.baseTime, $1.offset
        )
      }
      for (previous, chunk) in zip(ordered, ordered.dropFirst()) {
        guard chunk.baseTime >= previous.baseTime else {
          throw TraceError(
            path: path,
            reason: .chunkOutOfOrder(
              chunk: chunk.offset,
              "its alloc counter \(chunk.firstAllocCounter) follows thread \(serial)'s chunk at"
                + " offset \(previous.offset), but its base time \(chunk.baseTime) ns is before"
                + " that chunk's \(previous.baseTime) ns"))
        }
        next[previous.offset] = chunk.firstAllocCounter
      }
    }
    return next
  }

  /// Reads the chunk at `offset` with its stored payload, or `nil` when the file ends inside
  /// it. A chunk that claims to run past a trailer at the end of the file is damaged, not cut.
  private static func readChunk(_ file: TraceFile, at offset: UInt64) throws(TraceError)
    -> (ChunkHeader, [UInt8])?
  {
    let remaining = file.size - offset
    let headerSize = UInt64(TraceConstants.chunkHeaderSize)
    let headerBytes = try file.read(at: offset, count: Int(min(remaining, headerSize)))
    // Check what there is of the magic even in a partial header: garbage is not a cut.
    let magic = Array("HLCK".utf8)
    guard headerBytes.prefix(magic.count).elementsEqual(magic.prefix(headerBytes.count)) else {
      throw TraceError(path: file.path, reason: .badChunkMagic(chunk: offset))
    }
    guard remaining >= headerSize else { return nil }
    let chunk = try decodeChunkHeader(headerBytes, at: offset, path: file.path)
    let needed = headerSize + UInt64(chunk.storedLength)
    guard needed <= remaining else {
      if let trailer = try trailerOffset(file, after: offset) {
        throw TraceError(
          path: file.path,
          reason: .chunkPastTrailer(chunk: offset, needed: needed, trailer: trailer))
      }
      return nil
    }
    try checkLengths(of: chunk, path: file.path)
    let payload = try file.read(at: chunk.payloadOffset, count: Int(chunk.storedLength))
    guard chunk.checksum(over: payload) == chunk.checksum else {
      throw TraceError(path: file.path, reason: .checksumMismatch(chunk: offset))
    }
    return (chunk, payload)
  }

  /// The offset of a whole trailer chunk that ends the file after `offset`, if there is one.
  private static func trailerOffset(_ file: TraceFile, after offset: UInt64) throws(TraceError)
    -> UInt64?
  {
    let length = UInt64(TraceConstants.chunkHeaderSize + TraceConstants.trailerPayloadSize)
    guard file.size >= length, file.size - length > offset else { return nil }
    let start = file.size - length
    let bytes = try file.read(at: start, count: Int(length))
    guard let chunk = try? decodeChunkHeader(bytes, at: start, path: file.path),
      chunk.kind == .trailer, UInt64(chunk.storedLength) == length - 48,
      chunk.checksum(over: bytes.dropFirst(TraceConstants.chunkHeaderSize)) == chunk.checksum
    else { return nil }
    return start
  }

  private static func decodeChunkHeader(_ bytes: [UInt8], at offset: UInt64, path: String)
    throws(TraceError) -> ChunkHeader
  {
    func fail(_ reason: TraceError.Reason) -> TraceError { TraceError(path: path, reason: reason) }
    var cursor = ByteCursor(bytes)
    do {
      guard try cursor.readUInt32() == TraceConstants.chunkMagic else {
        throw fail(.badChunkMagic(chunk: offset))
      }
      let kindByte = try cursor.readUInt8()
      let encodingByte = try cursor.readUInt8()
      guard let kind = ChunkKind(rawValue: kindByte) else {
        throw fail(.unknownChunkKind(chunk: offset, kindByte))
      }
      guard let encoding = PayloadEncoding(rawValue: encodingByte) else {
        throw fail(.unknownEncoding(chunk: offset, encodingByte))
      }
      let flags = ChunkFlags(rawValue: try cursor.readUInt16())
      guard ChunkFlags.known.isSuperset(of: flags) else {
        throw fail(.nonzeroReserved(offset: offset + 6))
      }
      return ChunkHeader(
        offset: offset, kind: kind, encoding: encoding, threadSerial: try cursor.readUInt32(),
        threadID: try cursor.readUInt32(), storedLength: try cursor.readUInt32(),
        rawLength: try cursor.readUInt32(), baseTime: try cursor.readUInt64(),
        firstAllocCounter: try cursor.readUInt64(), recordCount: try cursor.readUInt32(),
        checksum: try cursor.readUInt32(), flags: flags)
    } catch let error as TraceError {
      throw error
    } catch {
      // The caller passes all 48 bytes.
      throw fail(.chunkPastEnd(chunk: offset, needed: 48, remaining: UInt64(bytes.count)))
    }
  }

  private static func checkLengths(of chunk: ChunkHeader, path: String) throws(TraceError) {
    func fail(_ detail: String) -> TraceError {
      TraceError(path: path, reason: .badPayloadLength(chunk: chunk.offset, detail))
    }
    switch chunk.encoding {
    case .raw:
      guard chunk.rawLength == chunk.storedLength else {
        throw fail("raw payload stored as \(chunk.storedLength) bytes but \(chunk.rawLength) raw")
      }
    case .zstd:
      guard Int(chunk.rawLength) <= TraceConstants.maximumRawPayloadLength else {
        throw fail("raw length \(chunk.rawLength) exceeds the 1 GiB limit")
      }
    }
    if chunk.kind == .trailer {
      guard chunk.encoding == .raw, Int(chunk.storedLength) == TraceConstants.trailerPayloadSize
      else {
        throw fail("trailer must be raw and \(TraceConstants.trailerPayloadSize) bytes")
      }
    }
  }

  /// The trailer counts every events chunk before it; fewer means chunks were lost.
  private static func checkCounts(
    _ chunks: [ChunkHeader], against trailer: TraceTrailer, at offset: UInt64, path: String
  ) throws(TraceError) {
    guard UInt64(chunks.count) == trailer.eventChunkCount else {
      throw TraceError(
        path: path,
        reason: .trailerMismatch(
          trailer: offset,
          "it counts \(trailer.eventChunkCount) event chunks, the file holds \(chunks.count)"))
    }
    if let late = chunks.first(where: { $0.baseTime > trailer.endTime }) {
      throw TraceError(
        path: path,
        reason: .trailerMismatch(
          trailer: offset,
          "chunk at offset \(late.offset) starts at \(late.baseTime) ns, after the end time"
            + " \(trailer.endTime) ns"))
    }
  }

  private static func decodeTrailer(_ payload: [UInt8], _ chunk: ChunkHeader, path: String)
    throws(TraceError) -> TraceTrailer
  {
    do {
      return try TraceTrailer(payload: payload)
    } catch {
      throw TraceError(path: path, reason: .badPayloadLength(chunk: chunk.offset, "trailer"))
    }
  }
}
