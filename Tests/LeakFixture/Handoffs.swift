import Dispatch
import Foundation

/// 48 bytes: made on the main thread, freed on another while the main thread waits without
/// allocating, so that the free comes before the next call of the thread that made it.
final class HandedOver {
  var a = 1, b = 2, c = 3, d = 4
}

/// 24 bytes: the last allocation of a thread that then waits until the process exits.
final class LastOfItsThread {
  var a = 1
}

nonisolated(unsafe) var handedOver: HandedOver?
nonisolated(unsafe) var lastOfItsThread: LastOfItsThread?

/// 20 HandedOver made and freed so, then one LastOfItsThread kept by a thread that never ends.
func handOver() {
  let made = DispatchSemaphore(value: 0)
  let freed = DispatchSemaphore(value: 0)
  let consumer = Thread {
    for _ in 0..<20 {
      made.wait()
      handedOver = nil
      freed.signal()
    }
  }
  consumer.start()
  for _ in 0..<20 {
    handedOver = HandedOver()
    made.signal()
    freed.wait()
  }
  let never = DispatchSemaphore(value: 0)
  let kept = DispatchSemaphore(value: 0)
  let last = Thread {
    lastOfItsThread = LastOfItsThread()
    kept.signal()
    never.wait()
  }
  last.start()
  kept.wait()
  print("handed over 20, kept 1")
}

/// 40 bytes: made on the main thread and queued for a consumer thread, which takes what the
/// queue holds and drops it at once, often while the main thread is inside its next malloc.
final class Streamed {
  var a = 1, b = 2, c = 3
}

/// `count` Streamed made on this thread and freed on another as they come.
func stream(_ count: Int) {
  let lock = NSCondition()
  nonisolated(unsafe) var queue: [Streamed] = []
  queue.reserveCapacity(count)
  let consumer = Thread {
    var taken = 0
    while taken < count {
      lock.lock()
      while queue.isEmpty { lock.wait() }
      let batch = queue
      queue.removeAll(keepingCapacity: true)
      lock.unlock()
      taken += batch.count
    }
  }
  consumer.start()
  for _ in 0..<count {
    let made = Streamed()
    lock.lock()
    queue.append(made)
    lock.signal()
    lock.unlock()
  }
  while !consumer.isFinished { usleep(1000) }
  print("streamed \(count)")
}
