// A Swift program whose leaks the end-to-end tests know, run under `heapline record`:
//   heapline-leak-fixture cycles      leaks two cycles, keeps objects reachable only through a
//                                     String, an enum payload, a Dictionary and an object with
//                                     weak references, then checks for leaks through the C API
//   heapline-leak-fixture foundation  uses Foundation and Dispatch, leaks nothing, checks
//   heapline-leak-fixture names       keeps Swift classes with nested and generic names (NamedTypes.swift)
//   heapline-leak-fixture threads     leaks one cycle, then three threads churn objects for
//                                     0.6 s while the recorder scans on a timer and a signal
//   heapline-leak-fixture referee     Referee.swift: the program memcheck and heaptrack referee
// Class sizes are given in comments: the tests expect them byte for byte.
import Dispatch
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

struct Words16 {
  var a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0, i = 0, j = 0, k = 0, l = 0, m = 0,
    n = 0, o = 0, p = 0
}
struct Words20 { var words = Words16(), q = 0, r = 0, s = 0, t = 0 }
struct Words25 { var words = Words20(), u = 0, v = 0, w = 0, x = 0, y = 0 }

/// 232 bytes: the 16-byte header, the callback (function and context) and 25 words.
final class Store {
  var onChange: (() -> Void)?
  var state = Words25()
}

/// 200 bytes: the header, the store, a String and 20 words. Its callbacks capture it, a String
/// and 16 words: their context is 168 bytes.
final class ViewController {
  let store = Store()
  var title = ""
  var state = Words20()

  func bindStrongly(suffix: String) {
    let extra = Words16()
    store.onChange = { self.title = "changed" + suffix + String(extra.a) }
  }

  func bindWeakly(suffix: String) {
    let extra = Words16()
    store.onChange = { [weak self] in self?.title = "changed" + suffix + String(extra.a) }
  }
}

/// 152 bytes: the header, its delegate and 16 words.
final class Session {
  var delegate: Delegate?
  var state = Words16()
}

/// 184 bytes: the header, its session and 20 words.
final class Delegate {
  var session: Session?
  var state = Words20()
}

final class Payload {
  var state = Words16()
}

enum Holder {
  case empty
  case one(Payload)
  case two(Payload, Payload)
}

// Roots of the objects that must not be reported.
nonisolated(unsafe) var bigText = ""
nonisolated(unsafe) var holder = Holder.empty
nonisolated(unsafe) var registry: [String: Payload] = [:]
nonisolated(unsafe) var observed: Payload?
nonisolated(unsafe) weak var weakObserved: Payload?
nonisolated(unsafe) weak var lastSession: Session?

// The shim's C API, found at run time: the preload library brings it.
typealias CheckLeaks = @convention(c) (UnsafeMutableRawPointer?) -> Int32
typealias ClearStack = @convention(c) () -> Void

@inline(never) func checkLeaks() {
  guard let check = dlsym(nil, "heapline_check_leaks"),
    let clear = dlsym(nil, "heapline_clear_stack")
  else {
    print("no heapline API")
    return
  }
  unsafeBitCast(clear, to: ClearStack.self)()
  var summary = [UInt64](repeating: 0, count: 5)
  let err = summary.withUnsafeMutableBytes {
    unsafeBitCast(check, to: CheckLeaks.self)($0.baseAddress)
  }
  print("check \(err): \(summary[1]) lost, \(summary[3]) possibly lost")
}

@inline(never) func leakViewController() {
  ViewController().bindStrongly(suffix: "!")
}

@inline(never) func dropWeakViewController() {
  ViewController().bindWeakly(suffix: "?")
}

@inline(never) func leakWeaklyObservedSession() {
  let session = Session()
  let delegate = Delegate()
  session.delegate = delegate
  delegate.session = session
  lastSession = session
}

@inline(never) func keepThroughSwiftValues() {
  bigText = String(repeating: "heapline ", count: 600)
  holder = .two(Payload(), Payload())
  for i in 0..<20 { registry["key \(i)"] = Payload() }
  observed = Payload()
  weakObserved = observed
}

@inline(never) func useFoundationAndDispatch() {
  let items = (0..<300).map { ["name": "item \($0)", "tags": ["a", "b\($0)"]] as [String: Any] }
  let data = try! JSONSerialization.data(withJSONObject: items)
  let decoded = try! JSONSerialization.jsonObject(with: data) as! [[String: Any]]
  let formatter = DateFormatter()
  formatter.dateFormat = "yyyy-MM-dd HH:mm"
  let date = formatter.string(from: Date(timeIntervalSince1970: 86_400))
  let group = DispatchGroup()
  let queue = DispatchQueue(label: "fixture", attributes: .concurrent)
  let lock = NSLock()
  nonisolated(unsafe) var total = 0
  for i in 0..<200 {
    queue.async(group: group) {
      let text = (0..<i).map(String.init).joined(separator: ",")
      lock.lock()
      total += text.count
      lock.unlock()
    }
  }
  group.wait()
  DispatchQueue.concurrentPerform(iterations: 4) { i in _ = (0..<500).map { "\($0 * i)" }.joined() }
  let url = URL(fileURLWithPath: "/tmp/fixture/file.txt")
  print("decoded \(decoded.count) \(date) \(total > 0) \(url.lastPathComponent)")
}

final class Churn: @unchecked Sendable {
  let stop = DispatchSemaphore(value: 0)
  var running = true
}

@inline(never) func churnWithThreads() {
  let churn = Churn()
  let done = DispatchGroup()
  for t in 0..<3 {
    let thread = Thread {
      var kept: [ViewController] = []
      var names: [String: Payload] = [:]
      var round = 0
      while churn.running {
        let controller = ViewController()
        controller.bindWeakly(suffix: "\(t)")
        kept.append(controller)
        if kept.count > 50 { kept.removeFirst(25) }
        names["round \(round % 100)"] = Payload()
        round += 1
      }
      _ = names.count
      done.leave()
    }
    done.enter()
    thread.start()
  }
  usleep(300_000)
  kill(getpid(), SIGPWR)  // `--leaks-signal`, sent by the program itself
  usleep(300_000)
  churn.running = false
  done.wait()
}

/// Seven arrays appended one by one to an array held by a global: its storage asks malloc for
/// 80 bytes, gets 88, and keeps the seventh array's pointer in bytes 80 to 87, past what it
/// asked for. Nothing leaks.
nonisolated(unsafe) var arrays: [[Int16]] = []
func keepInMallocsSlack() {
  for i in 0..<7 { arrays.append([Int16(i), 1, 2]) }
  print("arrays \(arrays.count), storage \(arrays.capacity)")
}

switch CommandLine.arguments.dropFirst().first {
case "cycles":
  leakViewController()
  dropWeakViewController()
  leakWeaklyObservedSession()
  keepThroughSwiftValues()
  checkLeaks()
case "foundation":
  useFoundationAndDispatch()
  checkLeaks()
case "threads":
  leakViewController()
  churnWithThreads()
case "referee":
  runReferee()
case "names":
  makeNamedTypes()
case "slack":
  keepInMallocsSlack()
case "handoff":
  handOver()
case "stream":
  stream(20_000)
default:
  print("usage: heapline-leak-fixture cycles|foundation|threads|referee|names|slack|handoff|stream")
  exit(2)
}
