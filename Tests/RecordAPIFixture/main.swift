// Heapline.record's failures, each in a process of its own: the file size limit that stands in
// for a full disk must not reach the test process, nor the TMPDIR that the test chooses. One
// line per case:
//   throwing: threw <error>
//   fulldisk: failed: <error>
//   then: recorded <N>          (a second recording, with room again, of 100 blocks)
// `heapline-record-fixture CASE` runs `throwing` (the body throws), `fulldisk` (64 KiB file
// size limit, SIGXFSZ ignored so writes fail with EFBIG, while 2,000,000 blocks are kept, each
// after one of a pseudo-random size made and freed, which no compressor can predict) or
// `nested` (a recording from a thread that the body waits for, for 12 s).
import Heapline

#if canImport(Glibc)
  import Glibc
#endif

struct BodyFailed: Error, CustomStringConvertible {
  var description: String { "the body failed" }
}

/// Keeps the blocks alive past the loop, so that the compiler cannot drop them.
nonisolated(unsafe) var kept: [UnsafeMutableRawPointer] = []

func run(_ name: String) -> String {
  switch name {
  case "throwing":
    do {
      _ = try Heapline.record {
        kept.append(malloc(100)!)
        throw BodyFailed()
      }
      return "throwing: no error"
    } catch {
      return "throwing: threw \(error)"
    }
  case "fulldisk":
    signal(SIGXFSZ, SIG_IGN)
    var limit = rlimit(rlim_cur: 64 * 1024, rlim_max: 64 * 1024)
    setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit)
    kept.reserveCapacity(2_000_000)
    do {
      _ = try Heapline.record {
        var state: UInt64 = 88_172_645_463_325_252
        for _ in 0..<2_000_000 {
          state ^= state << 13
          state ^= state >> 7
          state ^= state << 17
          free(malloc(1100 + Int(state % 3000)))
          kept.append(malloc(24)!)
        }
      }
      return "fulldisk: no error"
    } catch {
      // Then, with room again, the next recording in this process works
      var unlimited = rlimit(rlim_cur: rlim_t.max, rlim_max: rlim_t.max)
      setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &unlimited)
      let again = Result {
        try Heapline.record {
          Heapline.category("again") { for _ in 0..<100 { kept.append(malloc(100)!) } }
        }
      }
      let count = (try? again.get())?.statistics.category(named: "again")?.persistentCount
      return "fulldisk: failed: \(error)\nthen: \(count.map { "recorded \($0)" } ?? "\(again)")"
    }
  case "nested":
    // A recording started from a thread that the running recording's body waits for: it
    // never gets its turn. After 12 s the process ends, with what stderr said meanwhile.
    var thread = pthread_t()
    _ = try? Heapline.record {
      pthread_create(
        &thread, nil,
        { _ in
          _ = try? Heapline.record {}
          return nil
        }, nil)
      sleep(12)
      print("nested: the inner recording is still waiting")
      exit(0)
    }
    return "nested: the body returned"
  default:
    return "unknown case \(name)"
  }
}

for name in CommandLine.arguments.dropFirst() { print(run(name)) }
