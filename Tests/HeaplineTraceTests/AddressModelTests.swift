import HeaplineTrace
import Testing

/// Version 6's ALLOC codes its address against the chunk's model of the allocator: the class's
/// freed blocks, newest first, and where the last carved block ends (TraceFormat.md,
/// "Addresses"). The writer and the reader keep the model alike, so every address reads back.
@Suite("Address codes")
struct AddressModelTests {
  /// The address codes of a chunk's ALLOCs, from the low bits of their tags.
  static func codes(_ chunk: ChunkBuilder) throws -> [UInt8] {
    var cursor = ByteCursor(chunk.payloadBytes)
    if chunk.flags.contains(.sideSection) {
      _ = try cursor.readBytes(Int(try cursor.readVarint()))
    }
    var codes: [UInt8] = []
    while !cursor.isAtEnd {
      let tag = try cursor.readUInt8()
      switch tag {
      case 0x40...0x4F:
        codes.append(tag & 0x0F)
        _ = try cursor.readVarint()
        if tag == 0x4F { _ = try cursor.readSignedVarint() }
      case 0x0C, 0x0B: _ = try cursor.readSignedVarint()
      default: Issue.record("unexpected tag \(tag)")
      }
    }
    return codes
  }

  @Test("the newest freed block, the carve point, an older freed block, and an escape")
  func eachCode() throws {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    // 0x1000 is nothing the model knows (escape); 48 bytes are a 64-byte chunk, so the next
    // block is carved at 0x1040 (carve), and the one after at 0x1080 (carve)
    let a = chunk.alloc(at: 0, size: 48, address: 0x1000)
    let b = chunk.alloc(at: 0, size: 48, address: 0x1040)
    let c = chunk.alloc(at: 0, size: 48, address: 0x1080)
    // Freed in order a, b, c: c is the class's newest, a its third newest
    chunk.free(at: 1, a)
    chunk.free(at: 1, b)
    chunk.free(at: 1, c)
    chunk.alloc(at: 2, size: 56, address: 0x1080)  // newest of the same 64-byte class
    chunk.alloc(at: 2, size: 48, address: 0x1000)  // the class's second newest now
    chunk.alloc(at: 2, size: 48, address: 0x10C0)  // the carve point, still after c
    chunk.alloc(at: 2, size: 48, address: 0x1040)  // the class's last one: its newest
    chunk.alloc(at: 2, size: 48, address: 0x9000)  // none of those
    #expect(try Self.codes(chunk) == [15, 1, 1, 0, 2, 1, 0, 15])
    writer.append(chunk)
    let trace = try TemporaryTrace(writer)
    let addresses = try trace.events().events.compactMap { event -> UInt64? in
      guard case .alloc(let block) = event else { return nil }
      return block.address.rawValue
    }
    #expect(addresses == [0x1000, 0x1040, 0x1080, 0x1080, 0x1000, 0x10C0, 0x1040, 0x9000])
  }

  @Test(
    "a class keeps its sixteen newest freed blocks, codes reach the 14th, and large blocks share class 0"
  )
  func sixteenPerClass() throws {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    let blocks = (0..<17).map {
      chunk.alloc(at: 0, size: 24, address: Address(0x2000 + 32 * UInt64($0)))
    }
    for block in blocks { chunk.free(at: 1, block) }
    // The first freed dropped out when the seventeenth came: the fourteenth newest is the
    // fourth (code 14), and the first is spelled out
    chunk.alloc(at: 2, size: 24, address: 0x2060)
    chunk.alloc(at: 2, size: 24, address: 0x2000)
    let big = chunk.alloc(at: 3, size: 5000, address: 0x10_0000)
    chunk.free(at: 4, big)
    chunk.alloc(at: 5, size: 70_000, address: 0x10_0000)  // another size, the same class 0
    #expect(try Self.codes(chunk) == [15] + Array(repeating: 1, count: 16) + [14, 15, 15, 0])
    writer.append(chunk)
    let trace = try TemporaryTrace(writer)
    let addresses = try trace.events().events.compactMap { event -> UInt64? in
      guard case .alloc(let block) = event else { return nil }
      return block.address.rawValue
    }
    #expect(Array(addresses.suffix(4)) == [0x2060, 0x2000, 0x10_0000, 0x10_0000])
  }

  @Test("random allocations and frees of two threads over many chunks read back exactly")
  func randomRoundTrip() throws {
    // Given two threads that allocate, free their own blocks, the other's and earlier chunks'
    var writer = TraceWriter()
    var rng = TraceDamageFuzzTests.Seeded(state: 42)
    var expected: [AllocID: UInt64] = [:]
    var live: [[AllocID]] = [[], []]
    var addresses: [UInt64] = []
    var time: UInt64 = 0
    for _ in 0..<12 {
      for thread in 0..<2 {
        var chunk = writer.makeChunk(threadSerial: UInt32(thread + 1))
        var next: UInt64 = 0x10_0000 * UInt64(thread + 1)
        for _ in 0..<400 {
          time += rng.next() % 3
          let roll = rng.next() % 10
          let owner = rng.next() % 4 == 0 ? 1 - thread : thread
          if roll < 4 && !live[owner].isEmpty {
            let index = Int(rng.next() % UInt64(live[owner].count))
            let id = live[owner].remove(at: index)
            chunk.free(at: time, id)
          } else {
            let size = [8, 24, 100, 500, 2000][Int(rng.next() % 5)] + rng.next() % 4
            // Half the time a freed address comes back, as malloc would give it
            let reused = roll < 7 ? addresses.randomElement(using: &rng) : nil
            let address = reused ?? next
            next += (size + 24) & ~15
            let id = chunk.alloc(at: time, size: size, address: Address(address))
            expected[id] = address
            addresses.append(address)
            live[thread].append(id)
          }
        }
        writer.append(chunk, encoding: rng.next() % 2 == 0 ? .zstd : .raw)
      }
    }
    writer.appendTrailer(endTime: time + 1)
    // When it is read, every allocation has its address, and every free names a block
    let trace = try TemporaryTrace(writer)
    var read: [AllocID: UInt64] = [:]
    for event in try trace.events().events {
      if case .alloc(let block) = event { read[block.id] = block.address.rawValue }
    }
    #expect(read == expected)
  }
}
