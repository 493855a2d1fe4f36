import HeaplineAnalysis
import HeaplineTrace
import Testing

/// The default suppressions match the frame that called the allocator, never a runtime
/// function further out on the stack, and never a frame without a name where one is needed.
@Suite struct LeakDefaultSuppressionTests {
  /// A stack, innermost first, of `function@module` frames (`@module` alone: no name).
  func stack(_ frames: String...) -> [SymbolizedFrame] {
    frames.enumerated().map { index, text in
      let parts = text.split(separator: "@", omittingEmptySubsequences: false)
      return SymbolizedFrame(
        pc: UInt64(0x1000 + index), function: parts[0].isEmpty ? nil : String(parts[0]),
        modulePath: "/lib/x86_64-linux-gnu/\(parts[1])")
    }
  }

  func rule(_ frames: [SymbolizedFrame]) -> String? {
    LeakDefaultSuppression.all.first { $0.matches(frames) }?.name
  }

  @Test func theLoadersOwnBlocksAreSuppressedButNotWhatItsConstructorsLeak() {
    #expect(
      rule(
        stack(
          "malloc@ld-linux-x86-64.so.2", "_dlfo_mappings_segment_allocate@ld-linux-x86-64.so.2",
          "dlopen@libc.so.6", "main@app")) == "loader")
    // Unsymbolized, the loader is still known by its module
    #expect(rule(stack("@ld-linux-x86-64.so.2", "@app")) == "loader")
    // A constructor that dlopen runs leaks for the program
    #expect(rule(stack("make_table@libplugin.so", "call_init@ld-linux-x86-64.so.2")) == nil)
  }

  @Test func onlyTheCRuntimesInternalCachesAreSuppressed() {
    #expect(rule(stack("_IO_file_doallocate@libc.so.6", "_IO_doallocbuf@libc.so.6")) == "c-runtime")
    // strdup's block is the caller's: a leak of the program's
    #expect(rule(stack("strdup@libc.so.6", "main@app")) == nil)
    #expect(rule(stack("@libc.so.6", "main@app")) == nil)
  }

  @Test func theCppRuntimesPoolIsSuppressedButNotTheProgramsObjects() {
    #expect(
      rule(
        stack("(anonymous namespace)::pool::pool()@libstdc++.so.6", "_GLOBAL__sub_I@libstdc++.so.6")
      )
        == "c++-runtime")
    #expect(rule(stack("operator new(unsigned long)@libstdc++.so.6", "leak_objects()@app")) == nil)
  }

  @Test func theSwiftRuntimesCachesAreSuppressedButNotTheProgramsObjects() {
    #expect(
      rule(
        stack(
          "swift_slowAlloc@libswiftCore.so",
          "swift::MetadataAllocator::Allocate(unsigned long, unsigned long)@libswiftCore.so"))
        == "swift-runtime")
    #expect(
      rule(
        stack(
          "swift_slowAlloc@libswiftCore.so", "swift_allocObject@libswiftCore.so",
          "main.Node.init()@app")) == nil)
    // An object made by unspecialized code inside the runtime is still the program's
    #expect(
      rule(
        stack(
          "swift_slowAlloc@libswiftCore.so", "swift_allocObject@libswiftCore.so",
          "Swift.Array.append(_:)@libswiftCore.so")) == nil)
    // Without a name, a frame in the runtime could be any of its functions
    #expect(rule(stack("@libswiftCore.so", "@libswiftCore.so")) == nil)
  }
}
