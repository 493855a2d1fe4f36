#if canImport(Glibc)
  import Glibc
#endif

/// Turns for ``Heapline/record(to:depth:_:)->_``: one recording at a time in a process.
///
/// Not a mutex held for the length of the recording: an `async` body may resume on another
/// thread, which must be able to end the turn. The lock here is held only to take or give the
/// turn. A caller that is already inside a recording is told so by
/// ``Heapline/isInsideRecording`` (a task-local), and never waits here for itself.
final class RecordingTurn: @unchecked Sendable {
  static let shared = RecordingTurn()

  private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let freed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
  private var taken = false
  /// Async callers waiting; the turn is handed to the first directly, so `taken` stays true.
  private var waiters: [CheckedContinuation<Void, Never>] = []

  private init() {
    pthread_mutex_init(lock, nil)
    pthread_cond_init(freed, nil)
  }

  /// Blocks the calling thread until the turn is free, then takes it.
  func take() {
    pthread_mutex_lock(lock)
    while taken { pthread_cond_wait(freed, lock) }
    taken = true
    pthread_mutex_unlock(lock)
  }

  /// Suspends the calling task, without blocking its thread, until the turn is its.
  func take() async {
    pthread_mutex_lock(lock)
    if !taken {
      taken = true
      pthread_mutex_unlock(lock)
      return
    }
    await withCheckedContinuation { waiter in
      waiters.append(waiter)
      pthread_mutex_unlock(lock)
    }
  }

  /// Ends the turn, from any thread: hands it to a waiting task, or frees it for a thread.
  func give() {
    pthread_mutex_lock(lock)
    if waiters.isEmpty {
      taken = false
      pthread_cond_signal(freed)
      pthread_mutex_unlock(lock)
    } else {
      let next = waiters.removeFirst()
      pthread_mutex_unlock(lock)
      next.resume()
    }
  }
}
