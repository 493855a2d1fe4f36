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
  let made = DispatchSemaphore(value: 0), freed = DispatchSemaphore(value: 0)
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
  let never = DispatchSemaphore(value: 0), kept = DispatchSemaphore(value: 0)
  let last = Thread {
    lastOfItsThread = LastOfItsThread()
    kept.signal()
    never.wait()
  }
  last.start()
  kept.wait()
  print("handed over 20, kept 1")
}
