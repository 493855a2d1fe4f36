import Foundation

extension Symbolizer {
  /// The flags for batch mode: inlined frames, linkage names (demangled here for Swift;
  /// `--demangle` handles C++).
  static let toolArguments = ["--inlining", "--functions=linkage", "--demangle"]

  /// Runs the tool once over `queries` and parses its answer blocks, one per query. Any
  /// failure yields fewer blocks (possibly none), and the missing ones fall back to offsets.
  func runTool(_ queries: [Query]) -> [[SymbolizerOutput.Entry]] {
    guard let toolPath else { return [] }
    var input = ""
    for query in queries {
      // The input syntax quotes paths; a path with a quote or newline cannot be expressed, so
      // ask about a file that does not exist and take the `??` answer, keeping blocks aligned.
      let path = query.path.contains(where: { $0 == "\"" || $0 == "\n" }) ? "/" : query.path
      input += "\"\(path)\" 0x\(String(query.address, radix: 16))\n"
    }
    guard let output = Self.run(toolPath, arguments: Self.toolArguments, input: Data(input.utf8))
    else { return [] }
    return SymbolizerOutput.parse(String(decoding: output, as: UTF8.self))
  }

  /// How long the tool may run: `HEAPLINE_SYMBOLIZER_TIMEOUT` seconds, 600 by default. A tool
  /// that hangs (a debug-info server that never answers, say) must not hang the recording
  /// that waits for it at its end.
  static var toolTimeout: Double {
    guard let text = currentEnvironment()["HEAPLINE_SYMBOLIZER_TIMEOUT"],
      let seconds = Double(text), seconds > 0
    else { return 600 }
    return seconds
  }

  /// Runs `executable` with `input` on stdin and returns its stdout; `nil` when it cannot start,
  /// or was stopped at its deadline (`timeout` seconds), which it says on standard error: its
  /// frames stay `module+0xoffset`.
  ///
  /// The input goes through an unlinked temporary file rather than a pipe: writing a pipe
  /// while the tool answers needs a second thread to avoid a deadlock, and writing to a tool
  /// that died would raise `SIGPIPE` in the caller's process.
  static func run(
    _ executable: String, arguments: [String], input: Data, timeout: Double = toolTimeout
  ) -> Data? {
    guard let inputFile = temporaryFile(holding: input) else { return nil }
    defer { try? inputFile.close() }
    guard descriptorsLeft(8) else {
      let message =
        "heapline: too few descriptors left to run \(executable) (ulimit -n): frames show"
        + " module+offset\n"
      FileHandle.standardError.write(Data(message.utf8))
      return nil
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let stdout = Pipe()
    process.standardInput = inputFile
    process.standardOutput = stdout
    // Its complaints about missing files are expected (modules deleted since the trace).
    process.standardError = FileHandle.nullDevice
    // Told at once, where waitUntilExit polls its run loop every 50 ms: a recording's end
    // waited that much longer for every symbolizer run.
    let exited = DispatchSemaphore(value: 0)
    let deadline = Deadline()
    process.terminationHandler = { _ in
      deadline.end()
      exited.signal()
    }
    do {
      try process.run()
    } catch {
      return nil
    }
    let pid = process.processIdentifier
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
      deadline.stop { kill(pid, SIGKILL) }
    }
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    exited.wait()
    guard !deadline.wasStopped else {
      let message =
        "heapline: \(executable) did not finish within \(Int(timeout.rounded(.up))) s and was"
        + " stopped: its frames show module+offset (HEAPLINE_SYMBOLIZER_TIMEOUT sets the limit)\n"
      FileHandle.standardError.write(Data(message.utf8))
      return nil
    }
    return output
  }

  /// The tool's deadline: it is stopped then unless it has ended. Its end is marked as soon as
  /// it is reaped, so that its process id, which another process may be given after, is never
  /// signalled.
  private final class Deadline: @unchecked Sendable {
    private let lock = NSLock()
    private var ended = false
    private var stopped = false

    /// Runs `kill` unless the tool has ended.
    func stop(_ kill: () -> Void) {
      lock.lock()
      defer { lock.unlock() }
      guard !ended else { return }
      stopped = true
      kill()
    }

    func end() {
      lock.lock()
      ended = true
      lock.unlock()
    }

    var wasStopped: Bool {
      lock.lock()
      defer { lock.unlock() }
      return stopped
    }
  }

  /// Whether `count` more descriptors can be opened: Foundation's `Process` needs a few for
  /// its pipes and run loop, and traps when it finds none (under `ulimit -n 12`).
  private static func descriptorsLeft(_ count: Int) -> Bool {
    var taken: [Int32] = []
    defer { for descriptor in taken { close(descriptor) } }
    for _ in 0..<count {
      // Not dup(2): a command run with stderr closed has descriptors enough all the same
      let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else { return false }
      taken.append(descriptor)
    }
    return true
  }

  /// A read handle, at offset 0, on an already unlinked temporary file holding `data`.
  private static func temporaryFile(holding data: Data) -> FileHandle? {
    var template = Array((NSTemporaryDirectory() + "/heapline-symbols-XXXXXX").utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard descriptor >= 0 else { return nil }
    _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    do {
      try handle.write(contentsOf: data)
      try handle.seek(toOffset: 0)
      return handle
    } catch {
      return nil
    }
  }
}
