extension TraceReader {
  /// The records of `chunk`: its stored payload, checked against the checksum and
  /// decompressed.
  ///
  /// - Throws: ``TraceError`` naming the chunk's offset when the checksum does not match or
  ///   the zstd frame does not decode to the raw length.
  public func payload(of chunk: ChunkHeader) throws(TraceError) -> [UInt8] {
    let stored = try file.read(at: chunk.payloadOffset, count: Int(chunk.storedLength))
    guard chunk.checksum(over: stored) == chunk.checksum else {
      throw TraceError(path: path, reason: .checksumMismatch(chunk: chunk.offset))
    }
    switch chunk.encoding {
    case .raw:
      return stored
    case .zstd:
      switch Zstd.decompress(stored, rawLength: Int(chunk.rawLength)) {
      case .success(let raw):
        return raw
      case .failure(let failure):
        throw TraceError(
          path: path, reason: .decompressionFailed(chunk: chunk.offset, failure.message))
      }
    }
  }

  /// A decoder over `chunk`'s records, with the checks that need the rest of the trace: where
  /// the thread's next chunk starts, and the trailer's end time.
  func cursor(for chunk: ChunkHeader) throws(TraceError) -> ChunkCursor {
    ChunkCursor(
      chunk: chunk, payload: try payload(of: chunk), path: path,
      nextAllocCounter: nextAllocCounter[chunk.offset], endTime: trailer?.endTime ?? .max)
  }

  /// Reads only `chunk`'s side section (its stacks, return addresses, modules and infos) into
  /// `metadata`, without the events: the first zstd frame of a compressed payload, which the
  /// shim makes of the side section alone. A chunk without one is read whole.
  func readSide(of chunk: ChunkHeader, into metadata: inout TraceMetadata) throws(TraceError) {
    guard chunk.flags.contains(.sideSection) else {
      var decoder = try cursor(for: chunk)
      return try decoder.drainMetadata(into: &metadata)
    }
    let stored = try file.read(at: chunk.payloadOffset, count: Int(chunk.storedLength))
    guard chunk.checksum(over: stored) == chunk.checksum else {
      throw TraceError(path: path, reason: .checksumMismatch(chunk: chunk.offset))
    }
    var front = chunk.encoding == .zstd ? Zstd.decompressFirstFrame(stored) : stored
    if front == nil { front = try payload(of: chunk) }
    var decoder = ChunkCursor(chunk: chunk, payload: front!, path: path)
    try decoder.readSideOnly(metadata: &metadata)
  }
}

