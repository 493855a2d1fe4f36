import Synchronization

/// How far the process's passes over traces have come, for a progress line that another
/// thread shows.
///
/// A pass (a stream of a trace's events, or a read of its chunks for metadata) counts the
/// chunks it has opened out of those it will open. Chunks are opened in time order, not file
/// order, so a file position would go backwards; passes that run at once (`diff` reads two
/// traces on two threads) add up into one fraction; and a command that passes over a trace
/// twice says which pass it is in rather than starting again from 0 % unexplained.
package enum TraceReadProgress {
  /// What a progress line shows.
  package struct Snapshot: Equatable, Sendable {
    /// Chunks opened and to open, over the passes of the earliest number running.
    package var done: UInt64 = 0
    package var total: UInt64 = 0
    /// Passes begun so far, and running now.
    package var begun = 0
    package var running = 0
    /// The number of the earliest pass running: one more than the passes that had finished
    /// when it began, so passes that run at once (`diff`'s) share one.
    package var pass = 0
  }

  private struct Running {
    var done: UInt64
    var total: UInt64
    var number: Int
  }

  private struct State {
    var passes: [Int: Running] = [:]
    var begun = 0
    var finished = 0
    /// By pass number, the chunks of the passes of that number that have finished: they count
    /// as read while the others of their number run on, so the share never falls.
    var finishedChunks: [Int: UInt64] = [:]
  }

  private static let state = Mutex(State())

  /// One pass over `total` chunks, counted from its creation until ``finish()`` or its end.
  package final class Pass: Sendable {
    private let id: Int

    package init(chunks total: Int) {
      id = TraceReadProgress.state.withLock { state in
        state.begun += 1
        state.passes[state.begun] = Running(
          done: 0, total: UInt64(total), number: state.finished + 1)
        return state.begun
      }
    }

    /// One more chunk opened.
    package func advance() {
      let id = id
      TraceReadProgress.state.withLock { state in state.passes[id]?.done += 1 }
    }

    /// The pass read all it will: it no longer counts among those running.
    package func finish() {
      let id = id
      TraceReadProgress.state.withLock { state in
        guard let pass = state.passes.removeValue(forKey: id) else { return }
        state.finished += 1
        state.finishedChunks[pass.number, default: 0] += pass.total
      }
    }

    deinit { finish() }
  }

  /// The passes now, for the line.
  package static var current: Snapshot {
    state.withLock { state in
      var snapshot = Snapshot(begun: state.begun, running: state.passes.count)
      snapshot.pass = state.passes.values.map(\.number).min() ?? 0
      let finished = state.finishedChunks[snapshot.pass] ?? 0
      snapshot.done = finished
      snapshot.total = finished
      for pass in state.passes.values where pass.number == snapshot.pass {
        snapshot.done += min(pass.done, pass.total)
        snapshot.total += pass.total
      }
      return snapshot
    }
  }
}
