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

  /// Blocks the calling thread until the turn is free, then takes it. A wait of more than
  /// `patience` seconds says why on stderr, once: a recording started from a thread that
  /// another recording's body waits for never gets its turn, and hung without a word.
  func take(patience: Int = 10) {
    pthread_mutex_lock(lock)
    var told = false
    while taken {
      var now = timespec()
      clock_gettime(CLOCK_REALTIME, &now)
      var until = now
      until.tv_sec += patience
      if pthread_cond_timedwait(freed, lock, &until) == ETIMEDOUT && taken && !told {
        told = true
        Heapline.say(
          "heapline: Heapline.record has waited \(patience) s for the recording that another "
            + "thread runs: recordings take turns, so one started from a thread that a "
            + "recording's body waits for never starts")
      }
    }
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
