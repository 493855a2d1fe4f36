import Dispatch
import Foundation
import Heapline
import HeaplineAnalysis
import Testing

/// A store that calls back whoever binds to it.
final class CallbackStore {
  var onChange: (() -> Void)?
}

/// A controller that binds to its store the right way: the callback holds it weakly.
final class WeaklyBoundController {
  let store = CallbackStore()
  var title = ""

  func bind(suffix: String = "!") {
    store.onChange = { [weak self] in self?.title = "changed" + suffix }
  }
}

/// A dictionary that dispatch queues fill together.
final class Squares: @unchecked Sendable {
  private let lock = NSLock()
  private var values: [Int: Int] = [:]

  func set(_ key: Int, _ value: Int) {
    lock.lock()
    values[key] = value
    lock.unlock()
  }

  var count: Int {
    lock.lock()
    defer { lock.unlock() }
    return values.count
  }
}

/// The in-process leak API in the test process itself, where it must find no false leak while
/// other tests run. (The exact figures of leaks found are checked in a process of its own, by
/// EndToEndTests' LeakAPITests: in this one, other tests' threads and data hold words that may
/// equal a leaked object's address, and a conservative scan takes those for pointers.)
@Suite(.serialized) struct LeakCheckTests {
  @Test func aClosureCapturingSelfWeaklyLeaksNothing() throws {
    try Heapline.expectNoLeaks { WeaklyBoundController().bind() }
  }

  @Test func foundationAndDispatchLeakNothing() throws {
    var decodedCount = 0
    var squareCount = 0
    var date = ""
    try Heapline.expectNoLeaks {
      let items = (0..<200).map {
        ["name": "item \($0)", "tag": String(repeating: "x", count: $0)]
      }
      let data = try JSONSerialization.data(withJSONObject: items)
      decodedCount =
        (try JSONSerialization.jsonObject(with: data) as? [[String: String]])?.count ?? 0
      let formatter = DateFormatter()
      formatter.dateFormat = "yyyy-MM-dd HH:mm"
      date = formatter.string(from: Date(timeIntervalSince1970: 0))
      let group = DispatchGroup()
      let queue = DispatchQueue(label: "leak-check", attributes: .concurrent)
      let squares = Squares()
      for i in 0..<100 {
        queue.async(group: group) { squares.set(i, i * i) }
      }
      group.wait()
      squareCount = squares.count
      _ = URL(fileURLWithPath: "/tmp/a/b.txt").lastPathComponent
    }
    #expect(decodedCount == 200)
    #expect(date.hasPrefix("1970"))
    #expect(squareCount == 100)
  }

}
