import Foundation
import Synchronization

/// Runs `second` on a thread of its own while `first` runs on this one, and returns both
/// results once both are done: two traces' passes, each already two threads (``EventPipe``),
/// keep both cores busy through each other's waits. When both throw, `first`'s error wins, as
/// if they had run in turn.
func bothAtOnce<A, B: Sendable>(
  _ first: () throws -> A, _ second: @escaping @Sendable () throws -> B
) throws -> (A, B) {
  let result = Mutex<Result<B, any Error>?>(nil)
  let done = DispatchSemaphore(value: 0)
  let thread = Thread {
    let outcome = Result { try second() }
    result.withLock { $0 = outcome }
    done.signal()
  }
  thread.name = "heapline-second-trace"
  thread.start()
  let firstResult = Result { try first() }
  done.wait()
  let a = try firstResult.get()
  return (a, try result.withLock { $0! }.get())
}
