import HeaplineTrace

/// What `record` does after the program has ended: when the shim could not finish the trace
/// (the program called `_exit`, aborted, crashed, was killed or ran `exec`), the recorder writes
/// what the shim's shared buffers still hold and the trailer, and says so.
enum TraceRecovery {
  static func finish(trace path: String, shared: SharedBuffers, status: ChildProcess.Status)
    throws
  {
    if let moved = shared.execTraces {
      let names =
        moved.count == 1 ? "\(path).\(moved.first)" : "\(path).\(moved.first) … \(path).\(moved.last)"
      CLIOutput.note(
        "the program ran exec \(moved.count) time(s): the trace of each program before it is in "
          + names)
    }
    guard let recovery = try shared.recover(trace: path, exitStatus: UInt32(status.code)) else {
      return
    }
    let how = status.signal != 0 ? "signal \(status.signal)" : "exit status \(status.code)"
    CLIOutput.note(
      "the program ended (\(how)) before the shim could finish the trace: heapline wrote the "
        + "last \(recovery.chunks) buffer(s), \(recovery.allocs) allocation(s) and "
        + "\(recovery.frees) free(s), from shared memory")
  }
}
