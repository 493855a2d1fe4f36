import Foundation

#if canImport(Glibc)
  import Glibc
#endif

// Glibc declares pipe2 only under _GNU_SOURCE. Close-on-exec from the start, so that a child that
// another test thread spawns meanwhile never inherits these pipes and holds them open.
@_silgen_name("pipe2") private func pipe2(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32)
  -> Int32

// glibc 2.34's, not in Glibc's Swift module: the child closes every descriptor from `low` up.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func posix_spawn_file_actions_addclosefrom_np(
  _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ low: Int32
) -> Int32

/// A child process in a process group of its own, so that everything it starts can be killed
/// with it, and whose end can be awaited with a deadline.
final class SpawnedChild: @unchecked Sendable {
  let pid: pid_t
  private let input: Int32
  private let output: Int32
  private let errors: Int32
  private let ended = NSCondition()
  private var status: Int32?

  /// Starts `executable` with `arguments` (argv[0] is `executable`) and exactly `environment`.
  init(executable: String, arguments: [String], environment: [String: String]) throws {
    // A child that stops reading its stdin must fail our write, not kill this process.
    signal(SIGPIPE, SIG_IGN)
    var fds = [Int32](repeating: -1, count: 6)
    for pair in 0..<3 {
      guard pipe2(&fds[pair * 2], O_CLOEXEC) == 0 else {
        for fd in fds where fd >= 0 { close(fd) }
        throw HarnessError("pipe: \(String(cString: strerror(errno)))")
      }
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
    posix_spawn_file_actions_adddup2(&actions, fds[3], 1)
    posix_spawn_file_actions_adddup2(&actions, fds[5], 2)
    // Only stdin, stdout and stderr: descriptors that other parts of the test process left
    // inheritable would take the child's numbers (as Foundation's Process also ensures).
    _ = posix_spawn_file_actions_addclosefrom_np(&actions, 3)
    // A new group; nothing blocked and every disposition at its default, whatever this test
    // thread blocks or ignores (SIGPIPE, above).
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(
      &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var child = pid_t()
    let err = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
    for fd in [fds[0], fds[3], fds[5]] { close(fd) }
    guard err == 0 else {
      for fd in [fds[1], fds[2], fds[4]] { close(fd) }
      throw HarnessError("cannot run \(executable): \(String(cString: strerror(err)))")
    }
    pid = child
    input = fds[1]
    output = fds[2]
    errors = fds[4]
    let waiter = Thread { [self] in reap() }
    waiter.start()
  }

  /// Writes `stdin` to the child and reads its stdout and stderr to the end, on threads of
  /// their own, so that a chatty child never blocks; `wait()` on the result gives both.
  func collect(stdin: Data) -> Collected {
    let collected = Collected()
    let (input, output, errors) = (self.input, self.output, self.errors)
    collected.start {
      stdin.withUnsafeBytes { bytes in
        var done = 0
        while done < bytes.count {
          let n = write(input, bytes.baseAddress! + done, bytes.count - done)
          if n < 0 && errno == EINTR { continue }
          if n <= 0 { break }
          done += n
        }
      }
      close(input)
      return Data()
    }
    collected.start { Self.readToEnd(output) }
    collected.start { Self.readToEnd(errors) }
    return collected
  }

  /// The exit status (128 + N for signal N, as a shell gives it), or nil when the child is
  /// still running after `seconds` (nil: no deadline).
  func wait(seconds: Double?) -> Int32? {
    let deadline = seconds.map { Date(timeIntervalSinceNow: $0) }
    ended.lock()
    defer { ended.unlock() }
    while status == nil {
      // Foundation's wait(until: .distantFuture) overflows its timespec and traps.
      guard let deadline else {
        ended.wait()
        continue
      }
      if !ended.wait(until: deadline) { break }
    }
    return status
  }

  /// SIGKILL to the child's whole process group.
  func killGroup() {
    kill(-pid, SIGKILL)
  }

  private func reap() {
    var raw: Int32 = 0
    var result: pid_t
    repeat { result = waitpid(pid, &raw, 0) } while result < 0 && errno == EINTR
    let code = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
    ended.lock()
    status = result == pid ? code : -1
    ended.broadcast()
    ended.unlock()
  }

  private static func readToEnd(_ fd: Int32) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = read(fd, &buffer, buffer.count)
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { break }
      data.append(buffer, count: n)
    }
    close(fd)
    return data
  }

  /// The child's stdout and stderr, once both pipes reach their end.
  final class Collected: @unchecked Sendable {
    private let group = DispatchGroup()
    private var results: [Data] = []
    private let lock = NSLock()

    fileprivate func start(_ work: @escaping @Sendable () -> Data) {
      group.enter()
      // Under the lock: a reader started before may be storing its result meanwhile, and an
      // append can move the array.
      let index = lock.withLock {
        results.append(Data())
        return results.count - 1
      }
      Thread { [self] in
        let data = work()
        lock.withLock { results[index] = data }
        group.leave()
      }.start()
    }

    /// Both, or nil when a pipe is still open at `deadline` (something the child started
    /// holds it).
    func wait(until deadline: Date = .distantFuture) -> (stdout: Data, stderr: Data)? {
      let timeout: DispatchTime =
        deadline == .distantFuture
        ? .distantFuture : .now() + max(0, deadline.timeIntervalSinceNow)
      guard group.wait(timeout: timeout) == .success else { return nil }
      return lock.withLock { (results[1], results[2]) }
    }
  }
}
