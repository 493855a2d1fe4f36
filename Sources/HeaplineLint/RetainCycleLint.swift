import Foundation
import SwiftParser
import SwiftSyntax

/// Finds closures that capture `self` strongly and are stored where `self` keeps them: a
/// retain cycle that nothing breaks.
///
/// The files given together are one module: a call passes its closure to a function that
/// stores it only if that function is among them.
///
/// ```swift
/// let findings = RetainCycleLint.lint(sources: [
///   (file: "Model.swift", text: "final class Model { var f: () -> Void = {}; func g() { f = { self.g() } } }")
/// ])
/// // findings.map(\.diagnostic):
/// // ["Model.swift:1:60: warning: closure captures 'self' strongly and is assigned to 'f', …"]
/// ```
public enum RetainCycleLint {
  /// The findings in these sources, in the order of the files, then of their lines.
  public static func lint(sources: [(file: String, text: String)]) -> [LintFinding] {
    let trees = sources.map { Parser.parse(source: $0.text) }
    let index = ModuleIndex(trees)
    var findings: [LintFinding] = []
    for (source, tree) in zip(sources, trees) {
      let finder = RetainCycleFinder(file: source.file, tree: tree, index: index)
      finder.walk(tree)
      findings += finder.findings.sorted { ($0.line, $0.column) < ($1.line, $1.column) }
    }
    return findings
  }

  /// The findings in these files, and in the `.swift` files under these directories (hidden
  /// directories and `.build` left out), as one module.
  ///
  /// - Throws: ``LintError/unreadable(path:reason:)`` for a path that is missing or unreadable.
  public static func lint(paths: [String]) throws -> [LintFinding] {
    var sources: [(file: String, text: String)] = []
    for file in try paths.flatMap(swiftFiles) {
      guard let data = FileManager.default.contents(atPath: file) else {
        throw LintError.unreadable(path: file, reason: "permission denied")
      }
      sources.append((file, String(decoding: data, as: UTF8.self)))
    }
    return lint(sources: sources)
  }

  /// The path itself if it is a file, or the `.swift` files under it, sorted, if a directory.
  static func swiftFiles(_ path: String) throws -> [String] {
    let manager = FileManager.default
    var isDirectory: ObjCBool = false
    guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw LintError.unreadable(path: path, reason: "no such file or directory")
    }
    guard isDirectory.boolValue else { return [path] }
    guard let names = try? manager.contentsOfDirectory(atPath: path) else {
      throw LintError.unreadable(path: path, reason: "permission denied")
    }
    var files: [String] = []
    for name in names.sorted() where !name.hasPrefix(".") {
      let child = path.hasSuffix("/") ? path + name : path + "/" + name
      var childIsDirectory: ObjCBool = false
      manager.fileExists(atPath: child, isDirectory: &childIsDirectory)
      if childIsDirectory.boolValue {
        files += try swiftFiles(child)
      } else if name.hasSuffix(".swift") {
        files.append(child)
      }
    }
    return files
  }
}
