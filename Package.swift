// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "Heapline",
  products: [
    .executable(name: "heapline", targets: ["heapline"]),
    .library(name: "Heapline", targets: ["Heapline"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")
  ],
  targets: [
    .systemLibrary(
      name: "CLibunwind", pkgConfig: "libunwind", providers: [.apt(["libunwind-dev"])]),
    .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
    // The shim. The same sources are compiled on their own into the preload library by
    // Tools/build-preload.sh, because a SwiftPM dynamic product would pull in libswiftCore.
    .target(
      name: "CHeapline", dependencies: ["CLibunwind", "CZstd"],
      cSettings: [.define("UNW_LOCAL_ONLY"), .define("_GNU_SOURCE"), .unsafeFlags(["-ftls-model=initial-exec"])],
      linkerSettings: [.linkedLibrary("pthread"), .linkedLibrary("dl")]),
    .target(name: "HeaplineTrace", dependencies: ["CZstd"]),
    .target(name: "HeaplineAnalysis", dependencies: ["HeaplineTrace"]),
    .target(name: "Heapline", dependencies: ["CHeapline", "HeaplineTrace", "HeaplineAnalysis"]),
    .executableTarget(
      name: "heapline",
      dependencies: [
        "HeaplineTrace", "HeaplineAnalysis",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    .executableTarget(name: "heapline-demo", path: "Tools/Demo"),
    .testTarget(name: "HeaplineTraceTests", dependencies: ["HeaplineTrace", "HeaplineAnalysis"]),
    .testTarget(name: "HeaplineTests", dependencies: ["Heapline"]),
    .testTarget(
      name: "EndToEndTests", dependencies: ["HeaplineTrace", "HeaplineAnalysis"],
      exclude: ["Fixtures"]),
  ]
)
