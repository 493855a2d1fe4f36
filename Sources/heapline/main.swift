import ArgumentParser

#if canImport(Glibc)
  import Glibc
#endif

// Exit statuses, as `env` and `timeout` have them: a recorded program's own status passes
// through (an ExitCode); 64 for a usage error, with the usage and a --help hint; 125 when
// `record` itself fails, 126 when the program cannot be executed, 127 when it is not found;
// 2 for any other failure (a bad trace). Every failure's message is one line on stderr.
do {
  var command = try HeaplineCommand.parseAsRoot()
  try command.run()
} catch let exit as ExitCode {
  Glibc.exit(exit.rawValue)
} catch let failure as RecordError {
  CLIOutput.error(failure.description)
  Glibc.exit(failure.status)
} catch {
  let code = HeaplineCommand.exitCode(for: error)
  if code == .success {  // --help and --version
    print(HeaplineCommand.fullMessage(for: error))
    Glibc.exit(0)
  }
  let message = HeaplineCommand.fullMessage(for: error)
  CLIOutput.error(message)
  if code == .validationFailure {
    CLIOutput.usage(message)
    Glibc.exit(64)
  }
  Glibc.exit(2)
}
