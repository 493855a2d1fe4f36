import HeaplineTrace

#if canImport(Glibc)
  import Glibc
#endif

/// What `record` does after the program has ended: when the shim could not finish the trace
/// (the program called `_exit`, aborted, crashed, was killed or ran `exec`), the recorder writes
/// what the shim's shared buffers still hold and the trailer, and says so.
enum TraceRecovery {
  /// Before a recording to `path`: removes PATH.1, PATH.2… that an earlier recording's exec'd
  /// programs left, as long as they are traces, so that this recording's are numbered from 1
  /// and none of them is mistaken for this run's.
  static func clearExecTraces(of path: String) {
    var removed = 0
    for n in 1... {
      let side = "\(path).\(n)"
      guard TraceDestination.isTrace(side), unlink(side) == 0 else { break }
      removed += 1
    }
    if removed > 0 {
      CLIOutput.note("removed \(removed) trace(s) that an earlier recording left at \(path).N")
    }
  }

  static func finish(trace path: String, shared: SharedBuffers, status: ChildProcess.Status)
    throws
  {
    if let moved = shared.execTraces {
      let names =
        moved.count == 1
        ? "\(path).\(moved.first)" : "\(path).\(moved.first) … \(path).\(moved.last)"
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
    if recovery.trailer.flags.contains(.buffersLost) {
      CLIOutput.warning(TraceReader.buffersLostNotice(path))
    }
  }
}
