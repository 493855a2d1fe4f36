import Foundation
import Testing

/// ^C at a terminal signals the whole foreground process group: the recorded program gets it
/// from the terminal, and heapline outlives it, to finish and pass the program's status on.
/// (heapline does not pass a terminal's SIGINT on a second time; a test cannot see that, since
/// the kernel merges a second SIGINT into one still pending.)
@Suite struct TerminalSignalTests {
  /// Runs `heapline record` on a terminal of its own (python3's pty), types ^C once the program
  /// is ready, and prints what the terminal showed and heapline's exit status.
  static let driver = """
    import os, pty, select, sys, time
    heapline, trace, ready = sys.argv[1:4]
    program = '''
    import signal, sys, time
    count = [0]
    def handle(signum, frame): count[0] += 1
    signal.signal(signal.SIGINT, handle)
    open(sys.argv[1], "w").close()
    while count[0] == 0: time.sleep(0.01)
    print("SIGINT received")
    sys.exit(3)
    '''
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(heapline, [heapline, "record", "-o", trace, "--", sys.executable, "-c", program,
                            ready])
    deadline = time.time() + 120
    while not os.path.exists(ready) and time.time() < deadline:
        time.sleep(0.01)
    os.write(fd, b"\\x03")
    seen = b""
    while True:
        readable, _, _ = select.select([fd], [], [], 120)
        if not readable:
            break
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        seen += data
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(seen.decode(errors="replace").replace("\\r\\n", "\\n"))
    print("status", os.waitstatus_to_exitcode(status))
    """

  @Test func controlCReachesTheProgramAndHeaplineOutlivesItToPassTheStatusOn() throws {
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("python.trace").path
    let ready = dir.appendingPathComponent("ready").path
    let result = try Harness.run(
      "/usr/bin/python3", ["-c", Self.driver, Harness.heapline, trace, ready])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(result.stdout.contains("SIGINT received\n"), "\(result.stdout)")
    // heapline outlived the ^C (130 otherwise) and passed the program's status on
    #expect(result.stdout.hasSuffix("status 3\n"), "\(result.stdout)")
  }
}
