import HeaplineTrace

/// The object list's rows as bytes: the numbers written as digits, and the fields that repeat
/// (a category, a stack's id and first user frame) escaped once and copied after that.
///
/// Each row used to be nine `String`s, escaped one by one and joined; the list of a trace with
/// millions of allocations spent most of its time there.
struct ObjectRows {
  private let metadata: TraceMetadata
  private let topFrames: [UInt64: SymbolizedFrame]
  private let style: FrameStyle
  /// `category,` by category id.
  private var categories = RepeatedFields(recent: 256)
  /// `stack_id,top_frame,top_frame_source` and the line end, by stack id.
  private var stackTails = RepeatedFields(recent: 4096)

  init(metadata: TraceMetadata, topFrames: [UInt64: SymbolizedFrame], style: FrameStyle) {
    self.metadata = metadata
    self.topFrames = topFrames
    self.style = style
  }

  /// Appends the row of the allocation numbered `index`, as ``CSV/record(_:)`` would make it.
  mutating func append(
    index: UInt64, _ record: ObjectRecordFile.Record, to text: inout TextBytes
  ) {
    text.append(decimal: index)
    text.append(byte: 0x2C)
    text.append(seconds: record.allocTime)
    text.append(byte: 0x2C)
    if record.freeTime != ObjectRecordFile.Record.notFreed {
      text.append(seconds: record.freeTime)
    }
    text.append(",0x")
    text.append(hex: record.address)
    text.append(byte: 0x2C)
    text.append(decimal: record.size)
    text.append(byte: 0x2C)
    if !categories.append(record.category, to: &text) {
      let id = record.category
      categories.add(id, CSV.field(metadata.category(CategoryID(id)).name) + ",", to: &text)
    }
    if !stackTails.append(record.stack, to: &text) {
      let stack = record.stack
      let frame = topFrames[stack]
      let fields = [
        String(stack), frame.map(style.name) ?? "", frame.flatMap(style.sourceLocation) ?? "",
      ]
      stackTails.add(stack, CSV.record(fields), to: &text)
    }
  }
}

/// Text made once per key and copied after that, from one buffer, found by the recent keys
/// before the dictionary of all.
private struct RepeatedFields {
  private var bytes: [UInt8] = []
  private var spans: [UInt64: Range<Int>] = [:]
  private var recent: RecentKeys<Range<Int>>

  init(recent places: Int) { recent = RecentKeys(places: places, empty: 0..<0) }

  /// Appends the text of `key`; false when there is none yet (then ``add(_:_:to:)`` it).
  mutating func append(_ key: UInt64, to text: inout TextBytes) -> Bool {
    let span: Range<Int>
    if let known = recent.value(of: key) {
      span = known
    } else {
      guard let known = spans[key] else { return false }
      recent.remember(key, known)
      span = known
    }
    bytes.withUnsafeBufferPointer { text.append(utf8: UnsafeBufferPointer(rebasing: $0[span])) }
    return true
  }

  /// Keeps `field` as the text of `key`, and appends it.
  mutating func add(_ key: UInt64, _ field: String, to text: inout TextBytes) {
    let start = bytes.count
    bytes.append(contentsOf: field.utf8)
    spans[key] = start..<bytes.count
    _ = append(key, to: &text)
  }
}
