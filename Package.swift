// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "Heapline",
  products: [
    .executable(name: "heapline", targets: ["heapline"]),
    .library(name: "Heapline", targets: ["Heapline"]),
    .library(name: "HeaplineAnalysis", targets: ["HeaplineAnalysis"]),
    .library(name: "HeaplineTesting", targets: ["HeaplineTesting"]),
    .library(name: "HeaplineImaging", targets: ["HeaplineImaging"]),
    .executable(name: "slideshow", targets: ["slideshow"]),
    .plugin(name: "HeaplineLintPlugin", targets: ["HeaplineLintPlugin"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    // 603 is the release that matches the Swift 6.3 toolchain.
    .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
    // `swift package generate-documentation` (Tools/docs.sh)
    .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    // The pprof export's message types. Their code is generated once and committed
    // (Tools/gen-pprof.sh): the package's build plugin would cost every CI run minutes.
    .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
  ],
  targets: [
    .systemLibrary(
      name: "CLibunwind", pkgConfig: "libunwind", providers: [.apt(["libunwind-dev"])]),
    .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
    .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
    .systemLibrary(
      name: "CLibjpeg", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
    .systemLibrary(name: "CLibpng", pkgConfig: "libpng16", providers: [.apt(["libpng-dev"])]),
    // The shim. The same sources are compiled on their own into the preload library by
    // Tools/build-preload.sh, because a SwiftPM dynamic product would pull in libswiftCore.
    .target(
      name: "CHeapline", dependencies: ["CLibunwind", "CZstd"],
      cSettings: [
        .define("UNW_LOCAL_ONLY"), .define("_GNU_SOURCE"),
        .unsafeFlags(["-ftls-model=initial-exec"]),
      ],
      linkerSettings: [.linkedLibrary("pthread"), .linkedLibrary("dl")]),
    .target(name: "HeaplineTrace", dependencies: ["CZstd"]),
    // A header only: the prefetch hint that the analyses' live tables give.
    .systemLibrary(name: "CPrefetch"),
    .target(name: "HeaplineAnalysis", dependencies: ["HeaplineTrace", "CPrefetch"]),
    // `heapline export --format pprof`: the only target that depends on swift-protobuf.
    .target(
      name: "HeaplinePprof",
      dependencies: [
        "HeaplineAnalysis", "HeaplineTrace", "CZlib",
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      exclude: ["profile.proto"]),
    .target(name: "Heapline", dependencies: ["CHeapline", "HeaplineTrace", "HeaplineAnalysis"]),
    // Swift Testing's leak trait and XCTest's assertions: a module of their own, so that a
    // program linking Heapline does not load the test libraries.
    .target(name: "HeaplineTesting", dependencies: ["Heapline"]),
    // libjpeg and libpng report errors by longjmp, which Swift frames must never see: this C
    // target keeps every setjmp and every call that may longjmp on the C side.
    .target(name: "CHeaplineImaging", dependencies: ["CLibjpeg", "CLibpng"]),
    .target(name: "HeaplineImaging", dependencies: ["Heapline", "CHeaplineImaging"]),
    .executableTarget(
      name: "slideshow",
      dependencies: [
        "HeaplineImaging", "Heapline",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      path: "Tools/Slideshow"),
    // How `heapline record` starts the program (fork, PR_SET_PDEATHSIG, exec) and forwards
    // signals to it: async-signal-safe code, so C.
    .target(name: "CHeaplineSpawn"),
    // The retain-cycle lint: the only target that depends on swift-syntax.
    .target(
      name: "HeaplineLint",
      dependencies: [
        .product(name: "SwiftSyntax", package: "swift-syntax"),
        .product(name: "SwiftParser", package: "swift-syntax"),
      ]),
    // `swift package heapline-lint`: runs `heapline lint` on the package's Swift targets.
    .plugin(
      name: "HeaplineLintPlugin",
      capability: .command(
        intent: .custom(
          verb: "heapline-lint", description: "Find closures that keep self in a retain cycle.")),
      dependencies: ["heapline"]),
    .executableTarget(
      name: "heapline",
      dependencies: [
        "HeaplineTrace", "HeaplineAnalysis", "HeaplinePprof", "CHeaplineSpawn", "HeaplineLint",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    .executableTarget(name: "heapline-demo", path: "Tools/Demo"),
    // A Swift program whose leaks the end-to-end tests know (LeakSwiftTests).
    .executableTarget(name: "heapline-leak-fixture", path: "Tests/LeakFixture"),
    // The in-process leak API in a process of its own (LeakAPITests).
    .executableTarget(
      name: "heapline-api-fixture", dependencies: ["Heapline", "HeaplineAnalysis"],
      path: "Tests/LeakAPIFixture"),
    // Heapline.record's failures (a throwing body, a full disk) in a process of its own.
    .executableTarget(
      name: "heapline-record-fixture", dependencies: ["Heapline"], path: "Tests/RecordAPIFixture"),
    .testTarget(name: "HeaplineTraceTests", dependencies: ["HeaplineTrace", "HeaplineAnalysis"]),
    .testTarget(
      name: "HeaplinePprofTests",
      dependencies: ["HeaplinePprof", "HeaplineAnalysis", "HeaplineTrace"]),
    .testTarget(name: "HeaplineTests", dependencies: ["Heapline", "HeaplineTesting"]),
    // The truth table's cases are Swift files that no target compiles (Fixtures).
    .testTarget(name: "HeaplineLintTests", dependencies: ["HeaplineLint"], exclude: ["Fixtures"]),
    .testTarget(
      name: "HeaplineImagingTests", dependencies: ["HeaplineImaging", "Heapline", "HeaplineTrace"]),
    .testTarget(
      name: "EndToEndTests",
      dependencies: ["HeaplineTrace", "HeaplineAnalysis", "HeaplineImaging"],
      exclude: ["Fixtures"]),
  ]
)
