import ArgumentParser

#if canImport(Glibc)
  import Glibc
#endif

// Every failure is one line on stderr and exit status 2; a recorded program's own exit status
// passes through as an ExitCode.
do {
  var command = try HeaplineCommand.parseAsRoot()
  try command.run()
} catch let exit as ExitCode {
  Glibc.exit(exit.rawValue)
} catch {
  let code = HeaplineCommand.exitCode(for: error)
  if code == .success {  // --help and --version
    print(HeaplineCommand.fullMessage(for: error))
    Glibc.exit(0)
  }
  CLIOutput.error(HeaplineCommand.message(for: error))
  Glibc.exit(2)
}
