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

  /// Writes the program's exit status into the trailer the shim wrote, which leaves it to the
  /// recorder: the JSON report's `exit_status` was null for every program that exited. The
  /// trailer keeps its size, so nothing after it moves.
  static func noteExitStatus(in reader: TraceReader, _ status: ChildProcess.Status) {
    guard status.signal == 0, var trailer = reader.trailer, var chunk = reader.trailerChunk,
      trailer.exitStatus == TraceTrailer.unknownStatus, chunk.encoding == .raw
    else { return }
    trailer.exitStatus = UInt32(status.code)
    let payload = trailer.encoded
    guard payload.count == Int(chunk.storedLength) else { return }
    chunk.seal(over: payload)
    let fd = open(reader.path, O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    defer { close(fd) }
    let bytes = chunk.encoded + payload
    _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, bytes.count, off_t(chunk.offset)) }
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
