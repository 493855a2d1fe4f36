import Foundation

extension Symbolizer {
  /// A global variable an address lies in: its name, demangled and without its type
  /// (`MyApp.cache`, a C global's own name), and the address's offset in it.
  public struct DataSymbol: Hashable, Sendable {
    public var name: String
    public var offset: UInt64
  }

  /// Names the globals that `addresses` (in the traced process) lie in, with the modules'
  /// symbol tables. An address in no module, in a rebuilt module, or in no symbol has no entry.
  public func symbolizeData<Addresses: Sequence<UInt64>>(
    _ addresses: Addresses, modules: [TraceModule]
  ) -> [UInt64: DataSymbol] {
    guard let toolPath else { return [:] }
    var asked: [(address: UInt64, module: TraceModule)] = []
    var changed: [String: Bool] = [:]
    for address in Set(addresses) {
      guard let module = modules.last(where: { $0.contains(address) }),
        !module.path.contains(where: { $0 == "\"" || $0 == "\n" }),
        !isChanged(module, &changed)
      else { continue }
      asked.append((address, module))
    }
    guard !asked.isEmpty else { return [:] }
    let input = asked.map {
      "DATA \"\($0.module.path)\" 0x\(String($0.module.fileAddress(of: $0.address), radix: 16))\n"
    }.joined()
    guard
      let output = Self.run(
        toolPath, arguments: ["--output-style=JSON"], input: Data(input.utf8))
    else { return [:] }
    var result: [UInt64: DataSymbol] = [:]
    let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
    for (query, line) in zip(asked, lines) {
      guard
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        let data = object["Data"] as? [String: Any], let mangled = data["Name"] as? String,
        !mangled.isEmpty, let start = (data["Start"] as? String).flatMap(Self.hex),
        let size = (data["Size"] as? String).flatMap(Self.hex)
      else { continue }
      let fileAddress = query.module.fileAddress(of: query.address)
      guard fileAddress >= start, fileAddress - start < max(size, 1) else { continue }
      var name = SwiftDemangler.demangleIfSwift(mangled)
      if let type = name.range(of: " : ") { name = String(name[..<type.lowerBound]) }
      result[query.address] = DataSymbol(name: name, offset: fileAddress - start)
    }
    return result
  }

  private static func hex(_ text: String) -> UInt64? {
    UInt64(text.hasPrefix("0x") ? String(text.dropFirst(2)) : text, radix: 16)
  }
}
