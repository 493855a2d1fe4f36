import ArgumentParser

#if canImport(Glibc)
  import Glibc
#endif

/// The check on `record`'s options that name a signal for the shim to catch (--mark-signal,
/// --warn-signal, --leaks-signal).
enum SignalOption {
  /// Signals the shim must not take: SIGKILL and SIGSTOP cannot be caught; the synchronous
  /// fatal ones mean a crash, and catching them would hide it; SIGPROF stops the world.
  static let refused: [Int32: String] = [
    SIGKILL: "SIGKILL", SIGSTOP: "SIGSTOP", SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS",
    SIGILL: "SIGILL", SIGFPE: "SIGFPE", SIGABRT: "SIGABRT", SIGTRAP: "SIGTRAP", SIGSYS: "SIGSYS",
    SIGPROF: "SIGPROF (the leak scan uses it to stop threads)",
  ]

  /// Throws unless `number` is 0 (none) or a signal that the shim may catch.
  static func check(_ number: Int32, option: String) throws {
    guard (0...64).contains(number) else {
      throw ValidationError(
        "\(option) must be a signal number from 1 to 64 (0 for none), not \(number)")
    }
    if let name = refused[number] {
      throw ValidationError("\(option) cannot be \(number), \(name)")
    }
  }
}
