extension TraceReader {
  /// Checks magic, version and header size, and decodes the file header.
  static func readFileHeader(_ file: TraceFile) throws(TraceError) -> (TraceHeader, Int) {
    func fail(_ reason: TraceError.Reason) -> TraceError {
      TraceError(path: file.path, reason: reason)
    }
    guard file.size > 0 else { throw fail(.emptyFile) }
    let available = Int(min(file.size, UInt64(TraceConstants.fileHeaderSize)))
    var cursor = ByteCursor(try file.read(at: 0, count: available))
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
      guard version == TraceConstants.version else { throw fail(.unsupportedVersion(version)) }
      let headerSize = try cursor.readUInt16()
      guard Int(headerSize) >= TraceConstants.fileHeaderSize else {
        throw fail(.badHeaderSize(headerSize))
      }
      guard UInt64(headerSize) <= file.size else {
        throw fail(.truncatedFileHeader(remaining: file.size))
      }
      return (try TraceHeader(fields: &cursor, version: version), Int(headerSize))
    } catch let error as TraceError {
      throw error
    } catch {
      // The 48 bytes were checked above, so the fields cannot run short.
      throw fail(.truncatedFileHeader(remaining: file.size))
    }
  }

  /// Walks the chunk headers from `start` to the end of the file.
  static func indexChunks(_ file: TraceFile, from start: UInt64) throws(TraceError) -> (
    chunks: [ChunkHeader], trailer: TraceTrailer?, trailerChunk: ChunkHeader?
  ) {
    var chunks: [ChunkHeader] = []
    var offset = start
    while offset < file.size {
      let chunk = try readChunkHeader(file, at: offset)
      if chunk.kind == .trailer {
        let trailer = try readTrailer(file, chunk)
        guard chunk.endOffset == file.size else {
          throw TraceError(
            path: file.path,
            reason: .dataAfterTrailer(trailer: chunk.offset, extra: file.size - chunk.endOffset))
        }
        return (chunks, trailer, chunk)
      }
      chunks.append(chunk)
      offset = chunk.endOffset
    }
    return (chunks, nil, nil)
  }

  /// Reads and checks one chunk header; the payload must lie inside the file.
  static func readChunkHeader(_ file: TraceFile, at offset: UInt64) throws(TraceError)
    -> ChunkHeader
  {
    func fail(_ reason: TraceError.Reason) -> TraceError {
      TraceError(path: file.path, reason: reason)
    }
    let remaining = file.size - offset
    let headerSize = UInt64(TraceConstants.chunkHeaderSize)
    guard remaining >= headerSize else {
      throw fail(.chunkPastEnd(chunk: offset, needed: headerSize, remaining: remaining))
    }
    let chunk: ChunkHeader
    do {
      let bytes = try file.read(at: offset, count: Int(headerSize))
      chunk = try decodeChunkHeader(bytes, at: offset, path: file.path)
    } catch let error as TraceError {
      throw error
    } catch {
      throw fail(.chunkPastEnd(chunk: offset, needed: headerSize, remaining: remaining))
    }
    let needed = headerSize + UInt64(chunk.storedLength)
    guard needed <= remaining else {
      throw fail(.chunkPastEnd(chunk: offset, needed: needed, remaining: remaining))
    }
    try checkLengths(of: chunk, path: file.path)
    return chunk
  }

  private static func decodeChunkHeader(_ bytes: [UInt8], at offset: UInt64, path: String)
    throws -> ChunkHeader
  {
    var cursor = ByteCursor(bytes)
    guard try cursor.readUInt32() == TraceConstants.chunkMagic else {
      throw TraceError(path: path, reason: .badChunkMagic(chunk: offset))
    }
    let kindByte = try cursor.readUInt8()
    let encodingByte = try cursor.readUInt8()
    guard let kind = ChunkKind(rawValue: kindByte) else {
      throw TraceError(path: path, reason: .unknownChunkKind(chunk: offset, kindByte))
    }
    guard let encoding = PayloadEncoding(rawValue: encodingByte) else {
      throw TraceError(path: path, reason: .unknownEncoding(chunk: offset, encodingByte))
    }
    _ = try cursor.readUInt16()  // reserved
    return ChunkHeader(
      offset: offset, kind: kind, encoding: encoding, threadSerial: try cursor.readUInt32(),
      threadID: try cursor.readUInt32(), storedLength: try cursor.readUInt32(),
      rawLength: try cursor.readUInt32(), baseTime: try cursor.readUInt64(),
      firstAllocCounter: try cursor.readUInt64(), recordCount: try cursor.readUInt32(),
      checksum: try cursor.readUInt32())
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
      guard chunk.encoding == .raw, Int(chunk.storedLength) >= TraceConstants.trailerPayloadSize
      else {
        throw fail("trailer must be raw and \(TraceConstants.trailerPayloadSize) bytes")
      }
    }
  }

  private static func readTrailer(_ file: TraceFile, _ chunk: ChunkHeader) throws(TraceError)
    -> TraceTrailer
  {
    let payload = try file.read(at: chunk.payloadOffset, count: Int(chunk.storedLength))
    guard FNV1a.hash(payload) == chunk.checksum else {
      throw TraceError(path: file.path, reason: .checksumMismatch(chunk: chunk.offset))
    }
    do {
      return try TraceTrailer(payload: payload)
    } catch {
      throw TraceError(path: file.path, reason: .badPayloadLength(chunk: chunk.offset, "trailer"))
    }
  }
}
