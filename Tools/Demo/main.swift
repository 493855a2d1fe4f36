// heapline-demo: a small program with a memory story to tell, recorded by the README's first
// command. It parses a generated log into records, keeps an index of them (which stays live),
// builds and drops a temporary report (transient), and leaves a cache that only grows.
#if canImport(Glibc)
  import Glibc
#endif

final class LogRecord {
  let level: String
  let message: String
  init(level: String, message: String) {
    self.level = level
    self.message = message
  }
}

final class LogIndex {
  private(set) var byLevel: [String: [LogRecord]] = [:]
  func add(_ record: LogRecord) { byLevel[record.level, default: []].append(record) }
}

final class ResponseCache {
  private var entries: [Int: [UInt8]] = [:]
  func store(_ key: Int, bytes: Int) { entries[key] = [UInt8](repeating: 0x2A, count: bytes) }
}

func parse(line: String) -> LogRecord {
  let parts = line.split(separator: " ", maxSplits: 1)
  return LogRecord(level: String(parts[0]), message: String(parts.count > 1 ? parts[1] : ""))
}

func makeReport(_ index: LogIndex) -> [String] {
  index.byLevel.map { "\($0.key): \($0.value.count) records" }.sorted()
}

let levels = ["INFO", "WARN", "ERROR", "DEBUG"]
let index = LogIndex()
let cache = ResponseCache()
for i in 0..<20_000 {
  index.add(parse(line: "\(levels[i % levels.count]) request \(i) served in \(i % 97) ms"))
  if i % 1_000 == 0 { cache.store(i, bytes: 64 * 1024) }
}
for line in makeReport(index) { print(line) }
// A raw C buffer that is never freed, so the report shows a malloc size class too.
let scratch = malloc(4096)
memset(scratch!, 0, 4096)
