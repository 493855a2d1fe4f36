import Foundation

extension Harness {
  /// Compiles Fixtures/NAME.swift with `flags` (-g always) into `directory`, as module NAME,
  /// and returns the program's path.
  static func swiftFixture(_ name: String, _ flags: [String], in directory: URL) throws -> String {
    let program = directory.appendingPathComponent(name).path
    let source = fixtures.appendingPathComponent("\(name).swift").path
    let built = try run(
      "/usr/bin/env", ["swiftc", "-g"] + flags + ["-module-name", name, "-o", program, source])
    guard built.status == 0 else { throw HarnessError("swiftc failed: \(built.stderr)") }
    return program
  }
}
