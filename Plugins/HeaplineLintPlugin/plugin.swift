import Foundation
import PackagePlugin

/// `swift package heapline-lint [--target NAME]… [--format json]`: runs `heapline lint` on
/// each Swift target of the package (all of them unless `--target` names some), each target
/// as one module, and fails when any closure is reported.
@main
struct HeaplineLintPlugin: CommandPlugin {
  struct Found: Error, CustomStringConvertible {
    var targets: [String]
    var description: String {
      "heapline lint reported closures in " + targets.joined(separator: ", ")
    }
  }

  func performCommand(context: PluginContext, arguments: [String]) async throws {
    let tool = try context.tool(named: "heapline")
    var extractor = ArgumentExtractor(arguments)
    let names = extractor.extractOption(named: "target")
    let targets =
      names.isEmpty ? context.package.targets : try context.package.targets(named: names)
    var failed: [String] = []
    for case let target as SwiftSourceModuleTarget in targets {
      // The target's own files, so that what it excludes (fixtures) stays out.
      let files = target.sourceFiles(withSuffix: "swift").map(\.url.path)
      guard !files.isEmpty else { continue }
      let process = Process()
      process.executableURL = tool.url
      process.arguments = ["lint"] + extractor.remainingArguments + files
      try process.run()
      process.waitUntilExit()
      if process.terminationStatus != 0 { failed.append(target.name) }
    }
    if !failed.isEmpty { throw Found(targets: failed) }
  }
}
