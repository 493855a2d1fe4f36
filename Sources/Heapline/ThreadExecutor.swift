#if canImport(Glibc)
  import Glibc
#endif

/// A task executor with one thread of its own, on a fresh stack: the async leak check runs its
/// body there, so that every allocation the body makes (with its child tasks, which inherit the
/// preference) is made on one known thread, whatever other tests do meanwhile.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
  private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let ready = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
  private var jobs: [UnownedJob] = []
  private var finished = false
  private var thread: FreshThread?
  /// The kernel's id of the executor's thread, once it has ended.
  private(set) var threadID: UInt32 = 0

  init() throws {
    pthread_mutex_init(lock, nil)
    pthread_cond_init(ready, nil)
    jobs.reserveCapacity(64)
    thread = try FreshThread { [self] in
      threadID = Heapline.currentThreadID()
      runJobs()
    }
  }

  deinit {
    pthread_cond_destroy(ready)
    pthread_mutex_destroy(lock)
    ready.deallocate()
    lock.deallocate()
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    pthread_mutex_lock(lock)
    jobs.append(job)
    pthread_cond_signal(ready)
    pthread_mutex_unlock(lock)
  }

  /// Runs the jobs left, then ends the thread and waits for it (its stack is then unmapped).
  func finish() {
    pthread_mutex_lock(lock)
    finished = true
    pthread_cond_signal(ready)
    pthread_mutex_unlock(lock)
    thread?.join()
    thread = nil
  }

  private func runJobs() {
    while true {
      pthread_mutex_lock(lock)
      while jobs.isEmpty && !finished { pthread_cond_wait(ready, lock) }
      if jobs.isEmpty {
        pthread_mutex_unlock(lock)
        return
      }
      let job = jobs.removeFirst()
      pthread_mutex_unlock(lock)
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}

/// A thread on a stack fresh from mmap, unmapped once joined: glibc would reuse the stack of
/// an exited thread, whose stale pointers would be found in the new frames' unused slots, where
/// they might point to a new block at a reused address.
final class FreshThread {
  private static let stackSize = 8 << 20
  private let stack: UnsafeMutableRawPointer
  private var thread = pthread_t()
  private var joined = false

  init(_ work: @escaping () -> Void) throws {
    guard
      let stack = mmap(
        nil, Self.stackSize, PROT_READ | PROT_WRITE,
        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
      stack != MAP_FAILED
    else { throw HeaplineError.io("mapping a stack for the leak check", errno) }
    self.stack = stack
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstack(&attributes, stack, Self.stackSize)
    let job = Unmanaged.passRetained(ThreadJob(work))
    let err = pthread_create(
      &thread, &attributes,
      { raw in
        Unmanaged<ThreadJob>.fromOpaque(raw!).takeRetainedValue().run()
        return nil
      }, job.toOpaque())
    guard err == 0 else {
      job.release()
      munmap(stack, Self.stackSize)
      throw HeaplineError.io("starting a thread for the leak check", err)
    }
  }

  func join() {
    guard !joined else { return }
    joined = true
    pthread_join(thread, nil)
    munmap(stack, Self.stackSize)
  }

  deinit { join() }
}

/// A closure handed to a new thread, which releases it when done.
final class ThreadJob: @unchecked Sendable {
  let run: () -> Void
  init(_ run: @escaping () -> Void) { self.run = run }
}
