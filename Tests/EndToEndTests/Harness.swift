import Foundation

/// Runs the built `heapline` and the C fixture programs for the end-to-end tests.
enum Harness {
  struct Result {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  /// `heapline`, built by `swift build` beside the test binary; the preload library that
  /// Tools/build-preload.sh made is there too.
  static var heapline: String {
    let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return exe.deletingLastPathComponent().appendingPathComponent("heapline").path
  }

  static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Fixtures")

  /// A fresh directory for one test's files.
  static func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "heapline-e2e-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  /// Compiles Fixtures/NAME.c with debug info into `directory` and returns the program's path.
  static func fixture(_ name: String, in directory: URL) throws -> String {
    let output = directory.appendingPathComponent(name).path
    let source = fixtures.appendingPathComponent("\(name).c").path
    let result = try run("/usr/bin/env", ["cc", "-g", "-O0", "-o", output, source, "-lpthread"])
    guard result.status == 0 else { throw HarnessError("cc failed: \(result.stderr)") }
    return output
  }

  /// Runs `heapline` with `arguments`.
  static func heapline(
    _ arguments: [String], stdin: String = "", environment: [String: String] = [:]
  ) throws -> Result {
    try run(heapline, arguments, stdin: stdin, environment: environment)
  }

  static func run(
    _ executable: String, _ arguments: [String], stdin: String = "",
    environment: [String: String] = [:]
  ) throws -> Result {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env.merge(environment) { $1 }
    process.environment = env
    let input = Pipe()
    let output = Pipe()
    let errors = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    input.fileHandleForWriting.write(Data(stdin.utf8))
    try input.fileHandleForWriting.close()
    // Read both pipes to the end before waiting, so that a chatty child never blocks.
    let out = DataBox()
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) {
      out.data = output.fileHandleForReading.readDataToEndOfFile()
    }
    let err = errors.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return Result(
      status: process.terminationStatus, stdout: String(decoding: out.data, as: UTF8.self),
      stderr: String(decoding: err, as: UTF8.self))
  }
}

struct HarnessError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Filled by one thread, read by another after a DispatchGroup wait orders the two.
private final class DataBox: @unchecked Sendable {
  var data = Data()
}
