import HeaplineTrace
import Testing

@testable import HeaplineAnalysis

/// Which frames a readable stack shows, how Swift names are simplified, and how a frame line is
/// cut to the width.
@Suite("Frame roles and style")
struct FrameRoleTests {
  static func frame(_ function: String?, thunk: Bool = false, module: String = "/bin/app")
    -> SymbolizedFrame
  {
    var frame = SymbolizedFrame(pc: 1, function: function, modulePath: module, moduleAddress: 1)
    frame.isThunk = thunk
    return frame
  }

  @Test("the runtime's simplified demangling drops modules and types; thunks are recognised")
  func swiftNamesSimplify() {
    #expect(SwiftDemangler.demangle("$s1t3midyS2iF") == "t.mid(Swift.Int) -> Swift.Int")
    #expect(SwiftDemangler.simplified("$s1t3midyS2iF") == "mid(_:)")
    #expect(
      SwiftDemangler.simplified("$s4main3FooC3baryySaySiGFyycfU_") == "closure #1 in Foo.bar(_:)")
    #expect(SwiftDemangler.simplified("make_blocks") == nil)
    #expect(SwiftDemangler.isThunk("$sIeg_ytIegr_TR"))
    #expect(!SwiftDemangler.isThunk("$s1t3midyS2iF"))
    #expect(!SwiftDemangler.isThunk("malloc"))
  }

  @Test("allocator entries and the Swift runtime on top, thunks, and glibc's start are hidden")
  func rolesOfAStack() {
    let core = "/usr/lib/swift/linux/libswiftCore.so"
    let frames = [
      Self.frame(nil, module: "/lib/libheapline-preload.so"), Self.frame("swift_slowAlloc"),
      Self.frame("swift_allocObject"), Self.frame("Node.__allocating_init()", thunk: true),
      Self.frame("_allocateStringStorage(codeUnitCapacity:)", module: core),
      Self.frame("closure #1 in makeNodes(count:)"), Self.frame("reabstraction thunk", thunk: true),
      Self.frame("Array.append(_:)", module: core), Self.frame("malloc"), Self.frame("main"),
      Self.frame("__libc_start_call_main"), Self.frame("__libc_start_main"), Self.frame(nil),
    ]
    #expect(
      FrameRole.roles(of: frames) == [
        .allocator, .allocator, .allocator, .thunk, .runtime, .user, .thunk, .user, .user, .user,
        .processStart, .processStart, .processStart,
      ])
    #expect(FrameRole.firstUserFrame(frames)?.function == "closure #1 in makeNodes(count:)")
    #expect(FrameRole.leadingHiddenCount(frames) == 5)
  }

  @Test("the standard library's code specialized or inlined into the program counts as runtime")
  func specializedStandardLibraryIsRuntime() {
    let frames = [
      Self.frame("swift_slowAlloc"), Self.frame("swift_allocObject"),
      Self.frame(
        "generic specialization <Swift.UInt8> of static Swift.Array._allocateUninitialized("
          + "Swift.Int) -> (Swift.Array<A>, Swift.UnsafeMutablePointer<A>)"),
      Self.frame("static Swift.Array.init(repeating: A, count: Swift.Int) -> Swift.Array<A>"),
      Self.frame(
        "function signature specialization <Arg[1] = Dead> of static App.Loader.contents("
          + "of: Swift.String) -> Swift.Array<Swift.UInt8>"),
      Self.frame("merged Swift.Array.append(A) -> ()"), Self.frame("main"),
    ]
    #expect(
      FrameRole.roles(of: frames) == [
        .allocator, .allocator, .runtime, .runtime, .user, .user, .user,
      ])
    #expect(FrameRole.firstUserFrame(frames)?.function?.contains("App.Loader.contents") == true)
  }

  @Test("a stack that never leaves the Swift runtime shows the runtime's frames")
  func aRuntimeOnlyStackShowsTheRuntime() {
    let core = "/usr/lib/swift/linux/libswiftCore.so"
    let frames = [
      Self.frame("swift_slowAlloc", module: core),
      Self.frame("swift_getGenericMetadata", module: core),
      Self.frame("_start"),
    ]
    #expect(FrameRole.roles(of: frames) == [.allocator, .user, .processStart])
  }

  @Test("a stack of nothing but allocator frames is shown whole, never empty")
  func aStackOfHiddenFramesIsShownWhole() {
    let frames = [Self.frame("malloc"), Self.frame("swift_slowAlloc")]
    #expect(FrameRole.userFrames(frames).map(\.function) == ["malloc", "swift_slowAlloc"])
  }

  @Test("a long name is cut in its middle so the line is exactly the width; paths go relative")
  func longLinesAreCut() {
    let name = "closure #1 in " + String(repeating: "veryLongFunctionName", count: 10) + "(_:)"
    var frame = Self.frame(name)
    frame.simplifiedFunction = name
    frame.file = "/home/me/app/Sources/App/main.swift"
    frame.line = 12
    let style = FrameStyle(root: "/home/me/app/")
    let line = style.capped(name: style.name(frame)) { "      #0 \($0)  main.swift:12  (app)" }
    #expect(line.count == 160)
    #expect(line.hasPrefix("      #0 closure #1 in veryLongFunctionName"))
    #expect(line.hasSuffix("FunctionName(_:)  main.swift:12  (app)"))
    #expect(line.contains("…"))
    #expect(style.sourceLocation(frame) == "Sources/App/main.swift:12")
    #expect(FrameStyle(root: "/home/me/ap").sourceLocation(frame) == frame.sourceLocation)
  }

  @Test("a long category name keeps its start and end, cut to 88 characters")
  func longCategoryNamesAreCut() {
    let name =
      "Swift._ContiguousArrayStorage<" + String(repeating: "Module.Type, ", count: 12) + "End>"
    let cut = FrameStyle.cutInMiddle(name, to: TextReportRenderer.categoryNameWidth)
    #expect(cut.count == 88)
    #expect(cut.hasPrefix("Swift._ContiguousArrayStorage<Module.Type, "))
    #expect(cut.hasSuffix("Module.Type, End>"))
    #expect(FrameStyle.cutInMiddle("Malloc 48 Bytes", to: 88) == "Malloc 48 Bytes")
  }
}
