import ArgumentParser
import CHeaplineSpawn
import HeaplineAnalysis

#if canImport(Glibc)
  import Glibc
#endif

// Before any thread starts: the mask this process was given is the program's (see hl_spawn).
hl_spawn_keep_signal_mask()

// Exit statuses, as `env` and `timeout` have them: a recorded program's own status passes
// through (an ExitCode); 64 for a usage error found while parsing, with the usage and a --help
// hint after the error line; 125 when `record` itself fails, 126 when the program cannot be
// executed, 127 when it is not found; 2 for any other failure (a bad trace), in one line.
var command: any ParsableCommand
do {
  command = try HeaplineCommand.parseAsRoot()
} catch {
  let code = HeaplineCommand.exitCode(for: error)
  if code == .success {  // --help and --version
    print(HeaplineCommand.fullMessage(for: error))
    Glibc.exit(0)
  }
  let message = HeaplineCommand.fullMessage(for: error)
  CLIOutput.parserError(message)
  guard code == .validationFailure else { Glibc.exit(2) }
  CLIOutput.usage(message)
  Glibc.exit(64)
}
// A write past `ulimit -f` fails with one line and status 2, as any other failed write, rather
// than killing the command with no word (the program that `record` starts keeps its own).
hl_spawn_ignore_file_size_signal()
// Under `ulimit -n 12`, starting the symbolizer at a recording's end trapped in Foundation's
// Process (the command died of SIGILL), and under `ulimit -n 4` the program could not be
// started; the program that `record` starts keeps the limit it was given.
hl_spawn_raise_file_limit(256)
// The command's own passes read each trace on a second thread (see TraceReading).
TraceReading.usesSecondThread = true
do {
  if let label = HeaplineCommand.progressLabel(for: command) { ProgressLine.start(label: label) }
  defer { ProgressLine.stop() }
  try command.run()
} catch let exit as ExitCode {
  Glibc.exit(exit.rawValue)
} catch let failure as RecordError {
  CLIOutput.error(failure.description)
  Glibc.exit(failure.status)
} catch {
  // --help parses into a command whose run throws the help.
  if HeaplineCommand.exitCode(for: error) == .success {
    print(HeaplineCommand.fullMessage(for: error))
    Glibc.exit(0)
  }
  // The arguments were valid: what fails now is the input (a trace, a suppressions file).
  CLIOutput.error(HeaplineCommand.message(for: error))
  Glibc.exit(2)
}
